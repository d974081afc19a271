package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/features"
	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// Watch events as the API names them, beyond the store's.
const (
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
	// initialEventsEnd annotates the bookmark that ends a watch's initial events.
	initialEventsEnd = "k8s.io/initial-events-end"
)

// watch answers a watch: a list with ?watch=true, or the deprecated watch/ paths (name set for a
// single object). It streams newline-delimited {"type","object"} events, flushed one by one, until the
// timeout, the client leaves, or the server stops accepting requests; then the stream ends cleanly.
func (s *scope) watch(w http.ResponseWriter, r *http.Request, p routes.Params, name string) {
	// kube's order: the response's encoding, the options as they parse and combine, the field
	// selector against the kind, and the resourceVersion last, when the storage reads it.
	out, err := negotiateOutput(r.Header.Get("Accept"), s.readConversions())
	var opts *listOptions
	if err == nil {
		q := r.URL.Query()
		q.Set("watch", "true")
		opts, err = parseListOptionsGated(q, s.api.cfg.Features.Enabled(features.WatchList))
	}
	if err == nil {
		err = s.fields.check(opts.fields)
	}
	if err == nil && name != "" {
		opts.fields, err = pinName(opts.fields, name)
	}
	if err == nil {
		err = opts.checkResourceVersion()
	}
	var table *tables.Watch
	if err == nil && out.format == formatTable {
		var topts tables.Options
		if topts, err = tables.ParseOptions(r.URL.Query()); err == nil {
			topts.Version = out.tableVersion
			table, err = s.table.Watch(topts)
		}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	timeout := opts.timeout
	if timeout <= 0 {
		min := s.api.cfg.MinRequestTimeout
		timeout = min + time.Duration(rand.Int64N(int64(min)))
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	source, ok := s.Backend.(eventSource)
	if !ok {
		writeError(w, r, apierrors.NewInternalError(fmt.Errorf("%s has no watch cache to watch", s.ResourcePath())))
		return
	}
	sendInitial := opts.sendInitialEvents != nil && *opts.sendInitialEvents
	wopts := cacher.WatchOptions{ResourceVersion: opts.resourceVersion, SendInitialEvents: sendInitial,
		Shared: s.fields.selection(opts.labels, opts.fields)}
	if wopts.Shared == nil {
		wopts.Filter = s.fields.filter(opts.labels, opts.fields) // selectable fields of a custom resource, or none
	}
	watcher, err := source.WatchEvents(ctx, s.Prefix(p.Namespace), wopts)
	if err != nil {
		if ctx.Err() != nil && r.Context().Err() == nil {
			// The watch's own timeout ended while it waited for a future resourceVersion: kube ends such
			// a watch as it ends any, with an empty stream, not an error.
			newEventWriter(w, s, table)
			return
		}
		writeError(w, r, store.APIError(err, s.GR, name))
		return
	}
	ew := newEventWriter(w, s, table)
	ew.partial, ew.partialVersion = out.partial, out.partialVersion
	ew.stream(ctx, r.Context(), watcher, opts.allowBookmarks, timeout)
}

// stream writes the watcher's events until ctx (the watch's timeout) ends, the request's server
// stops accepting requests, or an error event or a failed write ends the watch. reqCtx is the
// request's own context, which API Priority and Fairness reads.
func (e *eventWriter) stream(ctx, reqCtx context.Context, watcher *cacher.Watcher, allowBookmarks bool, timeout time.Duration) {
	// API Priority and Fairness holds the watch's seats until it is initialized: once the events
	// waiting at its start are written (kube's cache watcher says so after its initial events).
	initialized := false
	initDone := func() {
		if !initialized {
			initialized = true
			utilflowcontrol.WatchInitialized(reqCtx)
		}
	}
	// A bookmark shortly before the deadline lets a client resume from the newest revision.
	beforeDeadline := time.NewTimer(max(timeout-2*time.Second, timeout/2))
	defer beforeDeadline.Stop()
	done := request.LongRunningDone(reqCtx)
	events := watcher.Events()
	if len(events) == 0 {
		initDone()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-beforeDeadline.C:
			watcher.RequestBookmark()
		case ev, ok := <-events:
			if !ok {
				return
			}
			var err error
			switch ev.Type {
			case cacher.Bookmark:
				if allowBookmarks {
					err = e.bookmark(ev.Revision, ev.InitialEventsEnd)
				}
			case storage.Error:
				_ = e.status(watchErrorStatus(ev.Err))
				e.flush()
				return
			default:
				err = e.change(ev)
			}
			if err != nil {
				endWithStatus(e, err) // an object that does not convert ends the watch with an ERROR
				return
			}
			if len(events) == 0 {
				e.flush()
				initDone()
			}
		}
	}
}

// eventSource is what a watch reads: the resource's watch cache.
type eventSource interface {
	WatchEvents(ctx context.Context, prefix string, opts cacher.WatchOptions) (*cacher.Watcher, error)
}

// pinName adds metadata.name=name for a watch of one object, refusing a selector that names another.
func pinName(sel fields.Selector, name string) (fields.Selector, error) {
	if v, ok := sel.RequiresExactMatch("metadata.name"); ok && v != name {
		return nil, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
	}
	return fields.AndSelectors(sel, fields.OneTermEqualSelector("metadata.name", name)), nil
}

// watchErrorStatus is the Status an ERROR event carries: 410 Expired for a compacted revision, so
// that client-go relists, and a 500 that says what happened otherwise.
func watchErrorStatus(err error) *metav1.Status {
	switch {
	case storage.IsExpired(err):
		s := apierrors.NewResourceExpired(err.Error()).Status()
		return &s
	case storage.IsTooSlow(err):
		s := apierrors.NewInternalError(fmt.Errorf("the watch fell too far behind the changes of this resource and was stopped; watch again from the last resourceVersion received")).Status()
		return &s
	}
	s := apierrors.NewInternalError(err).Status()
	return &s
}

// eventWriter writes watch events to a streaming response, as objects or, for kubectl get -w, as
// one-row tables.
type eventWriter struct {
	w       http.ResponseWriter
	out     *bufio.Writer
	flusher http.Flusher
	scope   *scope
	table   *tables.Watch
	// partial, when set, sends each object as PartialObjectMetadata at partialVersion; a watch asked
	// for PartialObjectMetadataList ends at its first event, as kube's does (it cannot convert one).
	partial        string
	partialVersion string
}

// errPartialListWatch ends a watch asked for PartialObjectMetadataList, without a word.
var errPartialListWatch = errors.New("a watch has no PartialObjectMetadataList to send")

func newEventWriter(w http.ResponseWriter, s *scope, table *tables.Watch) *eventWriter {
	w.Header().Set("Content-Type", mediaJSON)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	ew := &eventWriter{w: w, out: bufio.NewWriterSize(w, 32<<10), flusher: f, scope: s, table: table}
	ew.flush()
	return ew
}

// change writes an object's event: the cache's shared wire line for plain JSON, encoded once for every
// watcher of the change, or a one-row table.
func (e *eventWriter) change(ev *cacher.Event) error {
	if e.partial != "" {
		return e.partialChange(ev)
	}
	if e.scope.Form.Converts(ev.KeyValue().Value) {
		return e.converted(ev)
	}
	if e.table != nil {
		obj, err := e.scope.store.DecodeStored(ev.KeyValue())
		if err != nil {
			return err
		}
		return e.asTable(string(ev.Type), obj)
	}
	line, err := ev.WireJSON()
	if err != nil {
		return err
	}
	_, err = e.out.Write(line)
	return err
}

// bookmark sends a BOOKMARK: an empty object of the kind with only its resourceVersion (and, at the
// end of the initial events, kube's annotation), as kube's watch cache sends it.
func (e *eventWriter) bookmark(rv int64, initialEnd bool) error {
	obj := e.scope.Strategy.New()
	obj.GetObjectKind().SetGroupVersionKind(e.scope.Strategy.GVK)
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEnd {
		m.SetAnnotations(map[string]string{initialEventsEnd: "true"})
	}
	if e.partial != "" {
		if e.partial != partialObject {
			return errPartialListWatch
		}
		return e.event(eventBookmark, partialBookmark(e.partialVersion, m.GetResourceVersion(), m.GetAnnotations()))
	}
	if e.table != nil {
		return e.asTable(eventBookmark, obj)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return e.event(eventBookmark, u.Object)
	}
	return e.event(eventBookmark, obj)
}

// partialChange writes an object's event as PartialObjectMetadata.
func (e *eventWriter) partialChange(ev *cacher.Event) error {
	if e.partial != partialObject {
		return errPartialListWatch
	}
	kv, err := e.scope.store.Readable(ev.KeyValue())
	if err != nil {
		return err
	}
	obj, err := e.scope.appendPartial(nil, kv, e.partialVersion)
	if err != nil {
		return err
	}
	return e.event(string(ev.Type), json.RawMessage(obj))
}

func (e *eventWriter) asTable(eventType string, obj runtime.Object) error {
	t, err := e.table.Convert(obj)
	if err != nil {
		return err
	}
	return e.event(eventType, t)
}

func (e *eventWriter) status(s *metav1.Status) error {
	s.Kind, s.APIVersion = "Status", "v1"
	return e.event(eventError, s)
}

func (e *eventWriter) event(eventType string, obj any) error {
	body, err := json.Marshal(struct {
		Type   string `json:"type"`
		Object any    `json:"object"`
	}{eventType, obj})
	if err != nil {
		return err
	}
	_, err = e.out.Write(append(body, '\n'))
	return err
}

func (e *eventWriter) flush() {
	if e.out.Flush() == nil && e.flusher != nil {
		e.flusher.Flush()
	}
}
