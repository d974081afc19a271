package cacher_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// One cacher per resource, run for the server's life, wraps the shared store; the handlers use it
// as that resource's storage.Store.
func ExampleNew() {
	var store storage.Store // the server's etcd3 store
	ctx := context.Background()
	configmaps, err := cacher.New(store, storage.ResourcePrefix("", "configmaps", ""), cacher.Config{})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := configmaps.Run(ctx); err != nil {
			log.Print(err)
		}
	}()
	// resourceVersion=0 lists (and Gets) come from memory; the rest, writes included, reach the store.
	list, err := configmaps.List(ctx, "configmaps/default/", storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list.Items), list.Revision)
}

// A watch handler's loop for plain JSON: each event's shared wire line, a flush when nothing more is
// waiting, a bookmark asked for shortly before the deadline. Bookmarks and errors are encoded by the
// handler, which knows the kind and writes Status objects.
func ExampleCacher_WatchEvents() {
	var configmaps *cacher.Cacher
	var rw http.ResponseWriter
	var r *http.Request
	timeout, allowBookmarks := 30*time.Minute, true

	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	w, err := configmaps.WatchEvents(ctx, storage.ResourcePrefix("", "configmaps", "default"), cacher.WatchOptions{
		ResourceVersion:   r.URL.Query().Get("resourceVersion"),
		SendInitialEvents: r.URL.Query().Get("sendInitialEvents") == "true",
		Filter:            nil, // the label and field selectors
	})
	if err != nil {
		// Invalid → 400, TooLargeResourceVersion → 504, Unavailable → 503, before the stream starts.
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	flusher := rw.(http.Flusher)
	beforeDeadline := time.NewTimer(timeout - 2*time.Second)
	defer beforeDeadline.Stop()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return // the deadline, or the server stopping
			}
			switch ev.Type {
			case cacher.Bookmark:
				if allowBookmarks {
					// {"type":"BOOKMARK","object":{"kind":...,"apiVersion":...,"metadata":{"resourceVersion":"<ev.Revision>"
					// plus, if ev.InitialEventsEnd, "annotations":{"k8s.io/initial-events-end":"true"}}}}
					fmt.Fprintf(rw, "...bookmark at %d...\n", ev.Revision)
				}
			case storage.Error:
				// Expired → a 410 Status with ev.Err.Error() as its message; TooSlow and others → 500.
				fmt.Fprintf(rw, "...error status: %s...\n", ev.Err)
			default:
				line, err := ev.WireJSON()
				if err != nil {
					return
				}
				if _, err := rw.Write(line); err != nil {
					return
				}
			}
			if len(w.Events()) == 0 {
				flusher.Flush()
			}
		case <-beforeDeadline.C:
			w.RequestBookmark()
		}
	}
}
