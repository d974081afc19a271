// Package cacher is the watch cache of one resource, kube's Cacher in spirit: one Store.Watch of the
// resource's prefix, started from a consistent Store.List, keeps an in-memory copy of every object
// and a window of the most recent changes. Every watcher of the resource reads that one stream, so a
// thousand watchers cost one etcd watch, and lists with resourceVersion "0" are answered from memory.
//
// A Cacher implements storage.Store: it answers what it can from memory (List and Get with
// resourceVersion "0" or an old enough "N", Watch) and passes everything else, every write included,
// to the store it wraps. WatchEvents is the watch with the API's full semantics (initial events,
// bookmarks, filter transitions, shared encodings) that the watch handler uses.
//
// Values handed out (KeyValue.Value, Event.Object, Event.WireJSON) are shared with the cache and
// every other watcher: callers must not modify them.
package cacher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// Config tunes a Cacher. Zero values take the defaults named on each field.
type Config struct {
	// WindowSize is how many recent changes the cacher keeps (default 4096): a watch from revision N
	// is served from them, and one from before the oldest gets an Expired error event.
	WindowSize int
	// WatcherBuffer is how many events a watcher holds for a reader that has not taken them yet
	// (default 64). The cache keeps every change once, in its window, whatever this is.
	WatcherBuffer int
	// MaxWatcherLag is how many changes of the resource a watcher whose reader does not read may fall
	// behind the newest before it is cut off with a TooSlow error event (default WindowSize/2, at most
	// WindowSize). Half the window leaves the reader room to watch again from the last revision it
	// received without being told it is too old.
	MaxWatcherLag int
	// BookmarkInterval is how often every watcher gets a Bookmark event (default 1 minute, as kube).
	BookmarkInterval time.Duration
	// WaitTimeout bounds how long a request waits for the cache to become ready or for a
	// resourceVersion that is not there yet (default 3s, as kube); then it fails with Unavailable or
	// TooLargeResourceVersion.
	WaitTimeout time.Duration
	// Logger receives what the cacher does on its own (re-lists, watchers cut off). Nil discards it.
	Logger *slog.Logger
}

// The defaults of Config.
const (
	DefaultWindowSize       = 4096
	DefaultWatcherBuffer    = 64
	DefaultBookmarkInterval = time.Minute
	DefaultWaitTimeout      = 3 * time.Second
)

func (cfg Config) withDefaults() Config {
	if cfg.WindowSize <= 0 {
		cfg.WindowSize = DefaultWindowSize
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.MaxWatcherLag <= 0 {
		cfg.MaxWatcherLag = max(cfg.WindowSize/2, 1)
	}
	cfg.MaxWatcherLag = min(cfg.MaxWatcherLag, cfg.WindowSize)
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = DefaultWaitTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Cacher is the watch cache of one resource prefix. Create it with New and start it with Run; its
// methods are safe for concurrent use.
type Cacher struct {
	store  storage.Store
	prefix string
	cfg    Config
	logger *slog.Logger

	running atomic.Bool
	// ready closes when the first list is in; stopped when Run ends.
	ready   chan struct{}
	stopped chan struct{}

	mu sync.RWMutex
	// rev is the cache's revision: every change up to it is applied.
	rev    int64
	index  index
	window window
	// notify closes (and is replaced) whenever the window grows or a bookmark is due: it wakes the
	// watchers waiting for news.
	notify chan struct{}
	// advanced closes (and is replaced) whenever rev moves: it wakes every reader waiting for the
	// cache to reach a revision.
	advanced chan struct{}
	// bookmarks counts the periodic bookmark ticks.
	bookmarks uint64
	// closed is set under mu when Run ends, so that no watcher starts afterwards.
	closed bool

	watchers     sync.WaitGroup
	liveWatchers atomic.Int64

	// progress asks the store's watches for progress marks; nil when the store cannot, and then
	// consistent reads go to the store. progressAsked is when it last did (Unix nanoseconds).
	progress      storage.ProgressRequester
	progressAsked atomic.Int64
}

var _ storage.Store = (*Cacher)(nil)

// New returns the cacher of the keys under prefix (such as "configmaps/" or "example.com/widgets/")
// in store. It does nothing until Run.
func New(store storage.Store, prefix string, cfg Config) (*Cacher, error) {
	if store == nil {
		return nil, errors.New("create a watch cache: no store given")
	}
	if prefix == "" || prefix == "/" {
		return nil, fmt.Errorf("create a watch cache: prefix %q is not a resource prefix such as configmaps/", prefix)
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	cfg = cfg.withDefaults()
	progress, _ := store.(storage.ProgressRequester)
	return &Cacher{
		store:    store,
		prefix:   prefix,
		cfg:      cfg,
		logger:   cfg.Logger.With("prefix", prefix),
		ready:    make(chan struct{}),
		stopped:  make(chan struct{}),
		window:   newWindow(cfg.WindowSize),
		notify:   make(chan struct{}),
		advanced: make(chan struct{}),
		progress: progress,
	}, nil
}

// Prefix returns the resource prefix the cacher holds, ending in "/".
func (c *Cacher) Prefix() string { return c.prefix }

// Stats describe a cacher at one moment.
type Stats struct {
	// Ready says the first list is in.
	Ready bool
	// Revision is the cache's revision; Objects how many objects it holds.
	Revision int64
	Objects  int
	// Bytes is the objects' stored size, summed.
	Bytes int64
	// Watchers counts the watches being served.
	Watchers int
	// Oldest is the oldest revision a watch can start from; Changes how many changes the window holds.
	Oldest  int64
	Changes int
}

// Stats returns the cacher's current state, for metrics and tests.
func (c *Cacher) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{
		Ready:    c.isReady(),
		Revision: c.rev,
		Objects:  c.index.size,
		Bytes:    c.index.bytes,
		Watchers: int(c.liveWatchers.Load()),
		Oldest:   c.window.oldest,
		Changes:  len(c.window.buf),
	}
}

// Ready is closed once the cache holds its first list of the resource, so that a server can report
// itself ready only when its caches can answer.
func (c *Cacher) Ready() <-chan struct{} { return c.ready }

// serving says whether reads may be answered from memory: the cache is filled and kept current.
func (c *Cacher) serving() bool {
	return !c.isStopped() && c.isReady()
}

func (c *Cacher) isStopped() bool {
	select {
	case <-c.stopped:
		return true
	default:
		return false
	}
}

func (c *Cacher) isReady() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// within returns prefix ended in "/" and whether it lies inside the cacher's prefix (the resource, or
// a namespace of it).
func (c *Cacher) within(prefix string) (string, bool) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix, strings.HasPrefix(prefix, c.prefix)
}

// waitReady waits, at most WaitTimeout, for the first list. kube answers 429 at once (KEP-4568); a
// cache of a few objects fills in milliseconds, so a client that comes at the very start is served
// rather than told to come back, and only a cache that takes long to fill sends it away.
func (c *Cacher) waitReady(ctx context.Context, op string) error {
	select {
	case <-c.ready:
		return nil
	default:
	}
	timer := time.NewTimer(c.cfg.WaitTimeout)
	defer timer.Stop()
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s %q: wait for the watch cache: %w", op, c.prefix, ctx.Err())
	case <-c.stopped:
		return c.stoppedError(op)
	case <-timer.C:
		return &storage.StorageError{Code: storage.Initializing, Op: op, Key: c.prefix,
			Err: fmt.Errorf("the watch cache of %q is not ready after %s: it is still listing the resource", c.prefix, c.cfg.WaitTimeout)}
	}
}

func (c *Cacher) stoppedError(op string) error {
	return &storage.StorageError{Code: storage.Unavailable, Op: op, Key: c.prefix,
		Err: fmt.Errorf("the watch cache of %q has stopped", c.prefix)}
}

// update runs f with mu held for writing. If f reports news, the watchers waiting for it wake once mu
// is released: waking them under the lock would have each of them block on it at once.
//
// Readers waiting for the cache to reach a revision wait on advanced instead, which closes whenever
// the revision moves: a progress mark moves it without news for the watchers, and waking a thousand
// watchers for nothing on every consistent read would cost more than the read.
func (c *Cacher) update(f func() (news bool)) {
	c.mu.Lock()
	before := c.rev
	var wake, advanced chan struct{}
	if f() {
		wake = c.notify
		c.notify = make(chan struct{})
	}
	if c.rev != before {
		advanced = c.advanced
		c.advanced = make(chan struct{})
	}
	c.mu.Unlock()
	if wake != nil {
		close(wake)
	}
	if advanced != nil {
		close(advanced)
	}
}

// waitFor waits, at most WaitTimeout, until the cache or etcd has reached rev. It asks etcd now and
// then, because a revision reached by writes to other resources never shows in this cache.
func (c *Cacher) waitFor(ctx context.Context, op, key string, rev int64) error {
	deadline := time.NewTimer(c.cfg.WaitTimeout)
	defer deadline.Stop()
	poll := time.NewTimer(0)
	defer poll.Stop()
	pause := 50 * time.Millisecond
	var etcd int64
	for {
		c.mu.RLock()
		current, advanced := c.rev, c.advanced
		c.mu.RUnlock()
		if current >= rev || etcd >= rev {
			return nil
		}
		select {
		case <-advanced:
		case <-poll.C:
			var err error
			if etcd, err = c.store.CurrentRevision(ctx); err != nil {
				return err
			}
			poll.Reset(pause)
			pause = min(2*pause, 500*time.Millisecond)
		case <-ctx.Done():
			return fmt.Errorf("%s %q: wait for resourceVersion %d: %w", op, key, rev, ctx.Err())
		case <-c.stopped:
			return c.stoppedError(op)
		case <-deadline.C:
			if latest, err := c.store.CurrentRevision(ctx); err == nil {
				etcd = max(etcd, latest)
			}
			if etcd >= rev {
				return nil
			}
			return &storage.StorageError{Code: storage.TooLargeResourceVersion, Op: op, Key: key,
				ResourceVersion: rev, CurrentRevision: max(etcd, current)}
		}
	}
}
