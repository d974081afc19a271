package handlers

import (
	"bytes"
	"fmt"
	"testing"

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
	s := &scope{res: &routes.Resource{Kind: kind, ListKind: kind + "List", Custom: custom}, gvr: gvr, objectGVK: gvr.GroupVersion().WithKind(kind), listKind: kind + "List"}
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
				if err := listScope(tc.custom).writeList(&buf, &res); err != nil {
					t.Fatal(err)
				}
				if got := buf.String(); got != tc.want {
					t.Errorf("placed=%v:\n got %s\nwant %s", placed, got, tc.want)
				}
			}
		})
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
				s.objectGVK.Kind, s.gvr.GroupVersion(), i, i, i)
			res.Items = append(res.Items, storage.KeyValue{Value: []byte(v), ModRevision: int64(1000 + i)}.WithPlace())
		}
		b.Run(fmt.Sprintf("custom=%v", custom), func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := s.writeList(&buf, &res); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}
