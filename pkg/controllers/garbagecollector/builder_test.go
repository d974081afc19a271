package garbagecollector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// recQueue records what the graph hands to a queue.
type recQueue struct{ names []string }

func (q *recQueue) Add(n *node)            { q.names = append(q.names, n.name) }
func (q *recQueue) AddRateLimited(n *node) { q.names = append(q.names, n.name+"(later)") }

type recEvents struct{ got []string }

func (r *recEvents) invalidNamespace(dep, owner identity) {
	r.got = append(r.got, dep.Namespace+"/"+dep.Name+": ownerRef "+owner.String()+" does not exist in namespace \""+dep.Namespace+"\"")
}

// step is one change the graph sees.
type step struct {
	op   string // add, delete, virtualDelete, relist
	src  string // cm (namespaced ConfigMaps), node (cluster-scoped Nodes), secret
	objs []*objectMeta
	id   identity // virtualDelete
}

func add(src string, o *objectMeta) step       { return step{op: "add", src: src, objs: []*objectMeta{o}} }
func del(src string, o *objectMeta) step       { return step{op: "delete", src: src, objs: []*objectMeta{o}} }
func relist(src string, o ...*objectMeta) step { return step{op: "relist", src: src, objs: o} }

func obj(ns, name, uid string, owners ...metav1.OwnerReference) *objectMeta {
	return &objectMeta{Namespace: ns, Name: name, UID: types.UID(uid), OwnerReferences: owners}
}

func deleting(o *objectMeta, finalizers ...string) *objectMeta {
	c := *o
	c.DeletionTimestamp = []byte(`"2026-01-01T00:00:00Z"`)
	c.Finalizers = finalizers
	return &c
}

func ref(apiVersion, kind, name, uid string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), BlockOwnerDeletion: &block}
}

func cmRef(name, uid string) metav1.OwnerReference { return ref("v1", "ConfigMap", name, uid, false) }

type harness struct {
	g                *graph
	deletes, orphans *recQueue
	events           *recEvents
	sources          map[string]*source
}

func newHarness() *harness {
	h := &harness{deletes: &recQueue{}, orphans: &recQueue{}, events: &recEvents{}}
	h.g = newGraph(h.deletes, h.orphans, newAbsentCache(), h.events, nil)
	h.sources = map[string]*source{
		"cm":     {kind: h.g.kind("v1", "ConfigMap")},
		"secret": {kind: h.g.kind("v1", "Secret")},
		"node":   {kind: h.g.kind("v1", "Node")},
	}
	return h
}

func (h *harness) apply(s step) {
	src := h.sources[s.src]
	switch s.op {
	case "add":
		h.g.observe(src, s.objs[0])
	case "delete":
		h.g.observeDelete(src, s.objs[0])
	case "virtualDelete":
		h.g.virtualDelete(s.id)
	case "unwatch":
		h.g.unwatch(src)
	case "relist":
		listed := map[types.UID]struct{}{}
		for _, o := range s.objs {
			h.g.observe(src, o)
			listed[o.UID] = struct{}{}
		}
		h.g.sweep(src, listed)
	}
}

// TestGraphChanges: each case sets the graph up, then applies one change and checks what it handed
// to the workers, the events it recorded, and the nodes it holds (uid: v for virtual, o observed).
func TestGraphChanges(t *testing.T) {
	owner := obj("ns", "owner", "o1")
	dep := obj("ns", "dep", "d1", cmRef("owner", "o1"))
	blockingDep := obj("ns", "dep", "d1", ref("v1", "ConfigMap", "owner", "o1", true))
	for _, tc := range []struct {
		name        string
		setup       []step
		last        step
		wantDeletes []string
		wantOrphans []string
		wantEvents  []string
		wantNodes   map[types.UID]string
		wantAbsent  []identity
		// wantNotAbsent must not be remembered absent.
		wantNotAbsent []identity
	}{{
		name:        "a dependent of an unknown owner makes a virtual owner, which a worker checks",
		last:        add("cm", dep),
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "v", "d1": "o"},
	}, {
		name:      "the owner seen after its dependent turns the virtual node real",
		setup:     []step{add("cm", dep)},
		last:      add("cm", owner),
		wantNodes: map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "an owner seen with other coordinates than its dependent named: the dependent is checked",
		setup:       []step{add("cm", dep)},
		last:        add("secret", obj("ns", "owner", "o1")),
		wantDeletes: []string{"dep"},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "an owner seen in another namespace than its dependent: event, and the dependent is checked",
		setup:       []step{add("cm", obj("ns", "dep", "d1", cmRef("owner", "o1")))},
		last:        add("cm", obj("other", "owner", "o1")),
		wantDeletes: []string{"dep"},
		wantEvents:  []string{`ns/dep: ownerRef [v1/ConfigMap, namespace: ns, name: owner, uid: o1] does not exist in namespace "ns"`},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "a dependent naming an owner seen in another namespace: event, and the dependent is checked",
		setup:       []step{add("cm", obj("other", "owner", "o1"))},
		last:        add("cm", dep),
		wantDeletes: []string{"dep"},
		wantEvents:  []string{`ns/dep: ownerRef [v1/ConfigMap, namespace: ns, name: owner, uid: o1] does not exist in namespace "ns"`},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "a deleted owner hands its dependents to the workers and is remembered absent",
		setup:       []step{add("cm", owner), add("cm", dep)},
		last:        del("cm", owner),
		wantDeletes: []string{"dep"},
		wantNodes:   map[types.UID]string{"d1": "o"},
		wantAbsent:  []identity{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
	}, {
		name:        "an owner starting a foreground deletion: its dependents and itself go to the workers",
		setup:       []step{add("cm", owner), add("cm", dep)},
		last:        add("cm", deleting(owner, "foregroundDeletion")),
		wantDeletes: []string{"dep", "owner"},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:      "a foreground deletion seen again starts nothing",
		setup:     []step{add("cm", owner), add("cm", dep), add("cm", deleting(owner, "foregroundDeletion"))},
		last:      add("cm", deleting(owner, "foregroundDeletion")),
		wantNodes: map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "an owner first seen in a foreground deletion starts it",
		last:        add("cm", deleting(owner, "foregroundDeletion")),
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o"},
	}, {
		name:        "an owner starting an orphaning goes to the orphan workers",
		setup:       []step{add("cm", owner), add("cm", dep)},
		last:        add("cm", deleting(owner, "orphan")),
		wantOrphans: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:      "an owner deleted with another finalizer starts nothing",
		setup:     []step{add("cm", owner), add("cm", dep)},
		last:      add("cm", deleting(owner, "example.com/x")),
		wantNodes: map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "a blocking reference removed wakes its owner",
		setup:       []step{add("cm", owner), add("cm", blockingDep)},
		last:        add("cm", obj("ns", "dep", "d1")),
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "a blocking reference turned non-blocking wakes its owner",
		setup:       []step{add("cm", owner), add("cm", blockingDep)},
		last:        add("cm", dep),
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:      "a non-blocking reference removed wakes nobody",
		setup:     []step{add("cm", owner), add("cm", dep)},
		last:      add("cm", obj("ns", "dep", "d1")),
		wantNodes: map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name:        "a deleted dependent wakes an owner deleting its dependents",
		setup:       []step{add("cm", owner), add("cm", blockingDep), add("cm", deleting(owner, "foregroundDeletion"))},
		last:        del("cm", blockingDep),
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o"},
	}, {
		name:        "a virtual owner found absent is removed and its dependents checked",
		setup:       []step{add("cm", dep)},
		last:        step{op: "virtualDelete", id: identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
		wantDeletes: []string{"dep"},
		wantNodes:   map[types.UID]string{"d1": "o"},
		wantAbsent:  []identity{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
	}, {
		name:  "a virtual owner named two ways: the absent identity's dependents are checked, the node takes the other identity",
		setup: []step{add("cm", dep), add("cm", obj("ns", "dep2", "d2", ref("v1", "Secret", "owner", "o1", false)))},
		last:  step{op: "virtualDelete", id: identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
		// The virtual node now stands for the Secret and is checked again later.
		wantDeletes: []string{"dep", "owner(later)"},
		wantNodes:   map[types.UID]string{"o1": "v", "d1": "o", "d2": "o"},
		wantAbsent:  []identity{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
	}, {
		name:      "an observed object is not removed by a virtual delete of other coordinates",
		setup:     []step{add("cm", owner)},
		last:      step{op: "virtualDelete", id: identity{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "owner", UID: "o1"}},
		wantNodes: map[types.UID]string{"o1": "o"},
	}, {
		name:        "a relist without an object deletes it",
		setup:       []step{add("cm", owner), add("cm", dep)},
		last:        relist("cm", dep),
		wantDeletes: []string{"dep"},
		wantNodes:   map[types.UID]string{"d1": "o"},
	}, {
		name:        "a namespaced dependent of a virtual cluster-scoped owner is checked",
		setup:       []step{add("node", obj("", "cluster-dep", "d0", ref("v1", "Node", "n", "o1", false)))},
		last:        add("cm", obj("ns", "dep", "d1", ref("v1", "Node", "n", "o1", false))),
		wantDeletes: []string{"dep"},
		wantNodes:   map[types.UID]string{"o1": "v", "d0": "o", "d1": "o"},
	}, {
		name:      "a namespaced dependent of an observed cluster-scoped owner is fine",
		setup:     []step{add("node", obj("", "n", "o1"))},
		last:      add("cm", obj("ns", "dep", "d1", ref("v1", "Node", "n", "o1", false))),
		wantNodes: map[types.UID]string{"o1": "o", "d1": "o"},
	}, {
		name: "a resource no longer served: its owner node turns virtual for a worker to check, and nothing is taken for deleted",
		setup: []step{add("cm", owner), add("cm", obj("ns", "lone", "l1")),
			add("secret", obj("ns", "dep", "d1", cmRef("owner", "o1")))},
		last:          step{op: "unwatch", src: "cm"},
		wantDeletes:   []string{"owner"},
		wantNodes:     map[types.UID]string{"o1": "v", "d1": "o"},
		wantNotAbsent: []identity{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "owner", UID: "o1"}},
	}, {
		name: "a resource no longer served: an owner waiting for a dependent of it is woken",
		setup: []step{add("secret", deleting(obj("ns", "owner", "o1"), "foregroundDeletion")),
			add("cm", obj("ns", "dep", "d1", ref("v1", "Secret", "owner", "o1", true)))},
		last:        step{op: "unwatch", src: "cm"},
		wantDeletes: []string{"owner"},
		wantNodes:   map[types.UID]string{"o1": "o"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness()
			for _, s := range tc.setup {
				h.apply(s)
			}
			h.deletes.names, h.orphans.names, h.events.got = nil, nil, nil
			h.apply(tc.last)
			slices.Sort(h.deletes.names)
			if !slices.Equal(h.deletes.names, tc.wantDeletes) {
				t.Errorf("attemptToDelete got %q, want %q", h.deletes.names, tc.wantDeletes)
			}
			if !slices.Equal(h.orphans.names, tc.wantOrphans) {
				t.Errorf("attemptToOrphan got %q, want %q", h.orphans.names, tc.wantOrphans)
			}
			if !slices.Equal(h.events.got, tc.wantEvents) {
				t.Errorf("events %q, want %q", h.events.got, tc.wantEvents)
			}
			nodes := map[types.UID]string{}
			for uid, n := range h.g.nodes {
				nodes[uid] = "o"
				if n.is(stateVirtual) {
					nodes[uid] = "v"
				}
			}
			if !mapsEqual(nodes, tc.wantNodes) {
				t.Errorf("nodes %v, want %v", nodes, tc.wantNodes)
			}
			for _, id := range tc.wantAbsent {
				if !h.g.absent.has(id) {
					t.Errorf("%s is not remembered absent", id)
				}
			}
			for _, id := range tc.wantNotAbsent {
				if h.g.absent.has(id) {
					t.Errorf("%s is remembered absent", id)
				}
			}
			checkLinks(t, h.g)
		})
	}
}

func mapsEqual(a, b map[types.UID]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkLinks checks that every reference of a node to an owner in the graph is mirrored by a
// dependents entry of the owner and back, and that the per-resource counts match.
func checkLinks(t *testing.T, g *graph) {
	t.Helper()
	counts := map[*source]int{}
	for _, n := range g.nodes {
		if n.src != nil {
			counts[n.src]++
		}
		for _, o := range n.owners {
			owner, ok := g.nodes[o.uid]
			if !ok {
				continue // a removed owner: the dependent waits for a worker
			}
			if _, ok := owner.dependents[n]; !ok {
				t.Errorf("%s is not a dependent of %s", n.name, owner.name)
			}
		}
		for d := range n.dependents {
			if g.nodes[d.uid] != d {
				t.Errorf("%s has a dependent %s that left the graph", n.name, d.name)
			}
			if !slices.ContainsFunc(d.owners, func(o ownerRef) bool { return o.uid == n.uid }) {
				t.Errorf("%s lists %s as dependent, which does not name it", n.name, d.name)
			}
		}
	}
	for s, c := range counts {
		if s.nodes != c {
			t.Errorf("source %s counts %d nodes, has %d", s.kind.kind, s.nodes, c)
		}
	}
}
