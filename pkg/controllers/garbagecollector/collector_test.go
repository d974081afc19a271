package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// memStore is the part of a watch cache the monitors use: a list, then a watch from its revision
// of what put adds.
type memStore struct {
	storage.Store // the other methods are not used: calling one panics
	mu            sync.Mutex
	items         map[string][]byte
	rev           int64
	history       []storage.Event
	watchers      []chan storage.Event
}

func newMemStore() *memStore { return &memStore{items: map[string][]byte{}} }

func (s *memStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &storage.ListResult{Revision: s.rev}
	for k, v := range s.items {
		res.Items = append(res.Items, storage.KeyValue{Key: k, Value: v})
	}
	return res, nil
}

func (s *memStore) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (<-chan storage.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan storage.Event, 100)
	for _, ev := range s.history {
		if ev.Revision > opts.Revision {
			ch <- ev
		}
	}
	s.watchers = append(s.watchers, ch)
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.watchers = slices.DeleteFunc(s.watchers, func(c chan storage.Event) bool { return c == ch })
		close(ch)
	}()
	return ch, nil
}

func (s *memStore) put(key string, obj map[string]any) {
	v, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	s.items[key] = v
	ev := storage.Event{Type: storage.Added, Object: storage.KeyValue{Key: key, Value: v}, Revision: s.rev}
	s.history = append(s.history, ev)
	for _, w := range s.watchers {
		w <- ev
	}
}

// fixedSource serves ConfigMaps alone, from one store.
type fixedSource struct {
	api   *routes.API
	store storage.Store
}

func (f fixedSource) Snapshot() Snapshot {
	return Snapshot{API: f.api, Changed: make(chan struct{}), Resources: []Resource{{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true,
		Store: f.store, Prefix: "configmaps/"}}}
}

func configMap(name, uid string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": uid, "resourceVersion": "1"}}}
	u.SetOwnerReferences(owners)
	return u
}

// deletes returns the names the fake client was asked to delete, with their UID preconditions.
func deletes(client *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			uid := ""
			if p := d.DeleteOptions.Preconditions; p != nil && p.UID != nil {
				uid = string(*p.UID)
			}
			out = append(out, d.Name+"@"+uid+"/"+string(*d.DeleteOptions.PropagationPolicy))
		}
	}
	return out
}

// TestCollectorRestarts: a run builds its graph from the watch cache and deletes the dependents of
// absent owners (with the UID as precondition), keeps those of live ones, stops when its context
// ends, and a second run starts from nothing and does the same.
func TestCollectorRestarts(t *testing.T) {
	api := routes.Builtin()
	store := newMemStore()
	live := configMap("live", "live-uid")
	orphaned := configMap("orphaned", "dep-1", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "gone-uid"})
	kept := configMap("kept", "dep-2", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "live", UID: "live-uid"})
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), live, orphaned, kept)
	for _, o := range []*unstructured.Unstructured{live, orphaned, kept} {
		store.put("configmaps/ns/"+o.GetName(), o.Object)
	}
	c, err := New(Config{Source: fixedSource{api: api, store: store}, Client: client, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	runUntil := func(want []string, change func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(ctx)
		}()
		if change != nil {
			waitUntil(t, func() bool { return c.GraphSize() >= 2 }) // live and kept, at least
			change()
		}
		waitUntil(t, func() bool { return slices.Equal(deletes(client), want) })
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
		if n := c.GraphSize(); n != 0 {
			t.Fatalf("the graph of a stopped run has %d nodes", n)
		}
	}
	runUntil([]string{"orphaned@dep-1/Background"}, nil)

	// The second run sees the delete's result (the fake client deleted it; the store did not),
	// and collects a dependent created meanwhile.
	late := configMap("late", "dep-3", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "gone-uid"})
	runUntil([]string{"orphaned@dep-1/Background", "late@dep-3/Background"}, func() {
		if err := client.Tracker().Add(late); err != nil {
			t.Fatal(err)
		}
		store.put("configmaps/ns/late", late.Object)
	})
	if slices.ContainsFunc(deletes(client), func(d string) bool { return d == "kept@dep-2/Background" }) {
		t.Error("a dependent of a live owner was deleted")
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(errors.New("condition not met within 10s"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
