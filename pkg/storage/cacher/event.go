package cacher

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apictl/apictl/pkg/storage"
)

// Bookmark is the type of an event that carries only a revision: a periodic progress mark, one the
// handler asked for, or the end of the initial events of a watch with SendInitialEvents.
const Bookmark storage.EventType = "BOOKMARK"

// Event is one event of a cacher watch. The events of one change are shared by every watcher that
// receives it, with their encodings: treat an Event and the bytes it returns as read-only.
type Event struct {
	// Type is Added, Modified, Deleted, Bookmark or Error, as the watcher sees the change: an object
	// that enters the watcher's filter is Added, one that leaves it Deleted.
	Type storage.EventType
	// Key is the object's key; empty for Bookmark and Error.
	Key string
	// Revision is the revision of the change. For a Bookmark it is the revision the watcher has seen
	// every change up to; for an Error, the last revision delivered before it.
	Revision int64
	// InitialEventsEnd marks the Bookmark that ends the initial events of a watch with
	// SendInitialEvents; the handler annotates it k8s.io/initial-events-end: "true".
	InitialEventsEnd bool
	// Err is set on Error events: a *storage.StorageError (Expired, TooSlow) or the filter's error.
	Err error

	// obj is the object this event carries: for Added and Modified the new state, for Deleted the last
	// state, with the event's revision.
	obj *encoded

	wireOnce sync.Once
	wire     []byte
	wireErr  error
}

// Object returns the event's object as JSON with metadata.resourceVersion set to the event's
// revision: the new state for Added and Modified, the last state for Deleted. It is computed once and
// shared by every watcher; nil for Bookmark and Error events.
func (e *Event) Object() ([]byte, error) {
	if e.obj == nil {
		return nil, nil
	}
	return e.obj.json()
}

// KeyValue returns the event's object as it is stored, without resourceVersion, with ModRevision set
// to the event's revision; the zero KeyValue for Bookmark and Error events.
func (e *Event) KeyValue() storage.KeyValue {
	if e.obj == nil {
		return storage.KeyValue{}
	}
	return storage.KeyValue{Key: e.Key, Value: e.obj.value, ModRevision: e.obj.rev}
}

// WireJSON returns the event as one line of a plain JSON watch stream,
// {"type":"ADDED","object":{...}} and a newline, computed once and shared by every watcher that
// receives the event. Bookmark and Error events have no object the cacher can write (their kind and
// Status come from the handler), so for them it returns an error.
func (e *Event) WireJSON() ([]byte, error) {
	e.wireOnce.Do(func() {
		if e.obj == nil {
			e.wireErr = fmt.Errorf("a %s event has no stored object: the handler encodes it", e.Type)
			return
		}
		obj, err := e.obj.json()
		if err != nil {
			e.wireErr = err
			return
		}
		line := make([]byte, 0, len(`{"type":"","object":}`)+len(e.Type)+len(obj)+1)
		line = append(line, `{"type":"`...)
		line = append(line, e.Type...)
		line = append(line, `","object":`...)
		line = append(line, obj...)
		e.wire = append(line, "}\n"...)
	})
	return e.wire, e.wireErr
}

// encoded is a stored value with a resourceVersion spliced in, computed on first use and then shared.
type encoded struct {
	value []byte
	rev   int64

	once sync.Once
	out  []byte
	err  error
}

func (e *encoded) json() ([]byte, error) {
	e.once.Do(func() {
		// `"resourceVersion":"",` and up to 19 digits.
		e.out, e.err = storage.WithResourceVersion(make([]byte, 0, len(e.value)+40), e.value, e.rev)
		if e.err != nil {
			e.out = nil
		}
	})
	return e.out, e.err
}

// version is one state of one object. The index holds the current version of each key; the window's
// changes hold the versions before and after each change. An object's events and its encoding hang
// off its version, so that the initial events of every watch and the live events share them.
type version struct {
	kv storage.KeyValue
	// ev is made by the first watch that needs an event of the version. Most versions of a large
	// cache are never sent as one, and keeping the events' fields inline cost 112 bytes per object:
	// 112 MB of a million-object cache (issue 22).
	ev atomic.Pointer[versionEvents]
}

// versionEvents are a version's events and their shared encoding.
type versionEvents struct {
	obj                     encoded
	addedOnce, modifiedOnce sync.Once
	added, modified         *Event
}

func newVersion(kv storage.KeyValue) *version {
	// Where resourceVersion goes is found once per change: every LIST and GET of the version splices
	// it there without scanning the object's metadata again (storage.AppendWithResourceVersion).
	return &version{kv: kv.WithPlace()}
}

// events returns v's events, made on first use.
func (v *version) events() *versionEvents {
	if e := v.ev.Load(); e != nil {
		return e
	}
	e := &versionEvents{}
	e.obj.value, e.obj.rev = v.kv.Value, v.kv.ModRevision
	if v.ev.CompareAndSwap(nil, e) {
		return e
	}
	return v.ev.Load()
}

// addedEvent is the Added event of this version: its creation, its entering a watcher's filter, or
// an initial event.
func (v *version) addedEvent() *Event {
	e := v.events()
	e.addedOnce.Do(func() {
		e.added = &Event{Type: storage.Added, Key: v.kv.Key, Revision: v.kv.ModRevision, obj: &e.obj}
	})
	return e.added
}

func (v *version) modifiedEvent() *Event {
	e := v.events()
	e.modifiedOnce.Do(func() {
		e.modified = &Event{Type: storage.Modified, Key: v.kv.Key, Revision: v.kv.ModRevision, obj: &e.obj}
	})
	return e.modified
}

// change is one entry of the window: a key going from prev to cur at rev. A nil cur is a delete, a
// nil prev a creation.
type change struct {
	rev       int64
	key       string
	cur, prev *version

	// gone is prev's value at rev: the object of a Deleted event, for a delete or for an object that
	// leaves a watcher's filter.
	gone        encoded
	deletedOnce sync.Once
	deleted     *Event

	// A gap is what a re-list found changed between revisions from and rev, whose events the cache
	// never saw; gap holds one change per key (cur and prev, revisions unknown). A watcher that the
	// gap concerns cannot be served past it.
	gap  []*change
	from int64
	// reset says the store's revision went backwards (etcd lost data): no watcher survives it.
	reset bool

	// readings are what shared filters' Readers read of cur and prev (read), made by the first
	// watcher with a selector that selects the change and used by every other with the same Reader:
	// a thousand watchers with label selectors decode a change once, not a thousand times. They go
	// when the change leaves the window, so the cache never holds a reading per object.
	readOnce sync.Once
	readings *readings
}

// readings are a change's states as one Reader read them.
type readings struct {
	reader    *storage.Reader
	cur, prev any
	err       error
}

func newChange(rev int64, key string, cur, prev *version) *change {
	ch := &change{rev: rev, key: key, cur: cur, prev: prev}
	if prev != nil {
		ch.gone.value, ch.gone.rev = prev.kv.Value, rev
	}
	return ch
}

// read returns ch's states as reader reads them, reading them on first use. The change keeps the
// readings of one Reader, the first to ask: the watchers of a resource share one (watches of one
// prefix go to one resource's cache), and a second Reader, were there one, reads for itself.
func (ch *change) read(reader *storage.Reader) (*readings, error) {
	ch.readOnce.Do(func() { ch.readings = ch.readWith(reader) })
	if r := ch.readings; r.reader == reader {
		return r, r.err
	}
	r := ch.readWith(reader)
	return r, r.err
}

func (ch *change) readWith(reader *storage.Reader) *readings {
	r := &readings{reader: reader}
	if ch.cur != nil {
		r.cur, r.err = reader.Read(ch.cur.kv)
	}
	if ch.prev != nil && r.err == nil {
		r.prev, r.err = reader.Read(ch.prev.kv)
	}
	return r
}

func (ch *change) deletedEvent() *Event {
	ch.deletedOnce.Do(func() {
		ch.deleted = &Event{Type: storage.Deleted, Key: ch.key, Revision: ch.rev, obj: &ch.gone}
	})
	return ch.deleted
}
