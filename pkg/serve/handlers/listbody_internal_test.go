package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apictl/apictl/pkg/serve/store"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// listScope is the part of a scope writeList reads, for a built-in resource or a custom one.
func listScope(custom bool) *scope {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	kind := "ConfigMap"
	if custom {
		gvr, kind = schema.GroupVersionResource{Group: "ex.io", Version: "v1", Resource: "things"}, "Thing"
	}
	r := &resource{listKind: kind + "List", Resource: &store.Resource{
		Res: &routes.Resource{Kind: kind, ListKind: kind + "List", Custom: custom}, GVR: gvr, ObjectGVK: gvr.GroupVersion().WithKind(kind), Form: store.AsStored{}}}
	r.shape = typedShape{}
	if custom {
		r.shape = unstructuredShape{}
	}
	s := &scope{resource: r, store: store.New(r.Resource, &store.Env{})}
	s.itemTypeMeta = []byte(`{"kind":"` + kind + `","apiVersion":"` + gvr.GroupVersion().String() + `",`)
	return s
}

func TestWriteList(t *testing.T) {
	remaining := int64(3)
	for _, tc := range []struct {
		name   string
		custom bool
		res    storage.ListResult
		want   string
	}{{
		name: "built-in items lose kind and apiVersion",
		res: storage.ListResult{Revision: 7, Items: []storage.KeyValue{
			{Value: []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}`), ModRevision: 5},
			{Value: []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","uid":"u"}}`), ModRevision: 6},
		}},
		want: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}},{"metadata":{"name":"b","uid":"u","resourceVersion":"6"}}]}`,
	}, {
		name: "built-in page: continue and remainingItemCount in ListMeta's order",
		res:  storage.ListResult{Revision: 9, Continue: "tok", RemainingItemCount: &remaining},
		want: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"tok","remainingItemCount":3},"items":[]}`,
	}, {
		name: "an item written by another encoder is kept as it is",
		res: storage.ListResult{Revision: 7, Items: []storage.KeyValue{
			{Value: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`), ModRevision: 5},
		}},
		want: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}]}`,
	}, {
		name:   "custom resources: unstructured, sorted, continue always",
		custom: true,
		res: storage.ListResult{Revision: 7, Items: []storage.KeyValue{
			{Value: []byte(`{"apiVersion":"ex.io/v1","kind":"Thing","metadata":{"name":"a"}}`), ModRevision: 5},
		}},
		want: `{"apiVersion":"ex.io/v1","items":[{"apiVersion":"ex.io/v1","kind":"Thing","metadata":{"name":"a","resourceVersion":"5"}}],"kind":"ThingList","metadata":{"continue":"","resourceVersion":"7"}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, placed := range []bool{false, true} {
				res := tc.res
				if placed { // as the watch cache keeps them
					res.Items = nil
					for _, kv := range tc.res.Items {
						res.Items = append(res.Items, kv.WithPlace())
					}
				}
				var buf bytes.Buffer
				if err := listScope(tc.custom).writeList(&buf, &res, nil); err != nil {
					t.Fatal(err)
				}
				if got := buf.String(); got != tc.want {
					t.Errorf("placed=%v:\n got %s\nwant %s", placed, got, tc.want)
				}
			}
		})
	}
}

// bigList is n stored objects of about size bytes each, as the watch cache keeps them.
func bigList(s *scope, n, size int) storage.ListResult {
	res := storage.ListResult{Revision: int64(n + 1)}
	for i := range n {
		v := fmt.Sprintf(`{"kind":"%s","apiVersion":"%s","metadata":{"name":"o%06d"},"data":{"k":"%0*d"}}`,
			s.ObjectGVK.Kind, s.GVR.GroupVersion(), i, size, i)
		res.Items = append(res.Items, storage.KeyValue{Value: []byte(v), ModRevision: int64(i + 1)}.WithPlace())
	}
	return res
}

// TestWriteListStreams checks that a list written in chunks is byte for byte the list written whole,
// and that the buffer never holds more than a chunk and one object.
func TestWriteListStreams(t *testing.T) {
	for _, custom := range []bool{false, true} {
		s := listScope(custom)
		res := bigList(s, 4000, 400) // about 1.8 MB: seven chunks
		var whole bytes.Buffer
		if err := s.writeList(&whole, &res, nil); err != nil {
			t.Fatal(err)
		}
		var streamed, buf bytes.Buffer
		flushes, most := 0, 0
		err := s.writeList(&buf, &res, func(b *bytes.Buffer) error {
			flushes++
			most = max(most, b.Len())
			streamed.Write(b.Bytes())
			b.Reset()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		streamed.Write(buf.Bytes())
		if !bytes.Equal(streamed.Bytes(), whole.Bytes()) {
			t.Fatalf("custom=%v: the streamed list differs from the whole one", custom)
		}
		if want := whole.Len() / listChunkBytes; flushes < want {
			t.Errorf("custom=%v: %d flushes of a %d-byte list, want at least %d", custom, flushes, whole.Len(), want)
		}
		if most > listChunkBytes+1024 {
			t.Errorf("custom=%v: a chunk of %d bytes, want at most a chunk and one object", custom, most)
		}
	}
}

// TestListStreamHTTP checks what the client gets: a list longer than a chunk goes out chunked (no
// Content-Length) with the same bytes and kube's trailing newline; a failed write stops the list.
func TestListStreamHTTP(t *testing.T) {
	s := listScope(false)
	res := bigList(s, 2000, 400)
	var whole bytes.Buffer
	if err := s.writeList(&whole, &res, nil); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	ls := &listStream{w: rec, ctx: context.Background(), seats: newListSeats(), contentType: mediaJSON}
	var buf bytes.Buffer
	if err := s.writeList(&buf, &res, ls.flush); err != nil {
		t.Fatal(err)
	}
	if !ls.started {
		t.Fatal("a list of several chunks did not start streaming")
	}
	ls.finish(&buf)
	if got := rec.Body.String(); got != whole.String()+"\n" {
		t.Fatalf("the streamed body differs (%d bytes, want %d)", len(got), whole.Len()+1)
	}
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != mediaJSON || rec.Header().Get("Content-Length") != "" {
		t.Fatalf("status %d, headers %v", rec.Code, rec.Header())
	}
	failing := &listStream{w: failingWriter{httptest.NewRecorder()}, ctx: context.Background(), seats: newListSeats(), contentType: mediaJSON}
	buf.Reset()
	if err := s.writeList(&buf, &res, failing.flush); err == nil {
		t.Fatal("a failed write did not stop the list")
	}
}

type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestPutBufferCaps checks that the pool drops buffers that grew large.
func TestPutBufferCaps(t *testing.T) {
	big := bytes.NewBuffer(make([]byte, 0, 2*maxPooledBytes))
	putBuffer(big)
	for range 100 {
		if b := getBuffer(); b == big {
			t.Fatal("a buffer over the cap was pooled")
		}
	}
}

// BenchmarkWriteList measures the LIST fast path's encoding of 1,000 ConfigMaps from the watch
// cache, as a built-in list (items without type meta) and as a custom resource list.
func BenchmarkWriteList(b *testing.B) {
	for _, custom := range []bool{false, true} {
		s := listScope(custom)
		res := storage.ListResult{Revision: 2000}
		for i := range 1000 {
			v := fmt.Sprintf(`{"kind":"%s","apiVersion":"%s","metadata":{"name":"cm%04d","namespace":"default","uid":"6f1c2b8e-0d5a-4b7e-9a51-3c2e8f0d%04d","creationTimestamp":"2026-11-26T12:00:00Z","labels":{"app":"bench"}},"data":{"key":"%0200d"}}`,
				s.ObjectGVK.Kind, s.GVR.GroupVersion(), i, i, i)
			res.Items = append(res.Items, storage.KeyValue{Value: []byte(v), ModRevision: int64(1000 + i)}.WithPlace())
		}
		b.Run(fmt.Sprintf("custom=%v", custom), func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := s.writeList(&buf, &res, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}

// TestListStreamFromStore checks that a list the store hands over one item at a time (ListResult.Stream)
// is written as the same bytes as the gathered one, and that a store's error stops it.
func TestListStreamFromStore(t *testing.T) {
	for _, custom := range []bool{false, true} {
		s := listScope(custom)
		res := bigList(s, 2000, 400)
		var whole bytes.Buffer
		if err := s.writeList(&whole, &res, nil); err != nil {
			t.Fatal(err)
		}
		streamed := res
		streamed.Items = nil
		streamed.Stream = func(fn func(storage.KeyValue) error) error {
			for _, kv := range res.Items {
				if err := fn(kv); err != nil {
					return err
				}
			}
			return nil
		}
		var buf bytes.Buffer
		if err := s.writeList(&buf, &streamed, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), whole.Bytes()) {
			t.Fatalf("custom=%v: the list from a stream differs from the gathered one", custom)
		}
		failed := errors.New("the store failed")
		streamed.Stream = func(fn func(storage.KeyValue) error) error { return failed }
		if err := s.writeList(&buf, &streamed, nil); !errors.Is(err, failed) {
			t.Fatalf("custom=%v: a failing stream gave %v", custom, err)
		}
	}
}

// TestListSeats checks that a streamed list holds a seat between its chunks once it has sent
// seatAfterChunks of them, and none before, while it writes
// or once it is done, and that a request that ends while it waits for a seat stops.
func TestListSeats(t *testing.T) {
	s := listScope(false)
	res := bigList(s, 20000, 400) // 8 MB: past the chunks a list sends without a seat
	seats := make(chan struct{}, 1)
	ls := &listStream{w: httptest.NewRecorder(), ctx: context.Background(), seats: seats, contentType: mediaJSON}
	var buf bytes.Buffer
	flushes := 0
	err := s.writeList(&buf, &res, func(b *bytes.Buffer) error {
		flushes++
		if err := ls.flush(b); err != nil {
			return err
		}
		if seated := len(seats) == 1 && ls.seated; seated != (flushes >= seatAfterChunks) {
			t.Fatalf("after chunk %d: seated %v, want a seat from chunk %d on", flushes, seated, seatAfterChunks)
		}
		return nil
	})
	if err != nil || flushes <= seatAfterChunks {
		t.Fatalf("err %v, %d flushes", err, flushes)
	}
	ls.finish(&buf)
	if len(seats) != 0 {
		t.Fatal("a finished list kept its seat")
	}

	seats <- struct{}{} // every seat taken
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	waiting := &listStream{w: httptest.NewRecorder(), ctx: ctx, seats: seats, contentType: mediaJSON}
	buf.Reset()
	if err := s.writeList(&buf, &res, waiting.flush); !errors.Is(err, context.Canceled) {
		t.Fatalf("a list whose request ended while it waited for a seat gave %v", err)
	}
	waiting.leave()
	if len(seats) != 1 {
		t.Fatal("a list that never got a seat gave one back")
	}
}
