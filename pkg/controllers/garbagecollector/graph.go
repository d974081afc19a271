package garbagecollector

import (
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kindRef is an apiVersion and kind, interned by the graph: every node and owner reference of a
// kind points at one copy, so that a million references cost a pointer each.
type kindRef struct {
	apiVersion, kind string
}

// identity is what names an object to the API, kube's objectReference: the coordinates of an owner
// reference plus the namespace the object is looked up in.
type identity struct {
	APIVersion, Kind, Namespace, Name string
	UID                               types.UID
}

// String is kube's rendering of an objectReference, which its event messages quote.
func (id identity) String() string {
	return "[" + id.APIVersion + "/" + id.Kind + ", namespace: " + id.Namespace + ", name: " + id.Name + ", uid: " + string(id.UID) + "]"
}

// ownerRef is one owner reference of a node, compact: the apiVersion and kind are interned and the
// two optional booleans are tri-states, so that a change of either (nil, false, true) is seen as
// kube's reflect.DeepEqual sees it.
type ownerRef struct {
	uid        types.UID
	name       string
	kind       *kindRef
	controller tristate
	block      tristate
}

// tristate is an optional boolean.
type tristate uint8

const (
	unset tristate = iota
	isFalse
	isTrue
)

func toTristate(b *bool) tristate {
	switch {
	case b == nil:
		return unset
	case *b:
		return isTrue
	default:
		return isFalse
	}
}

func (t tristate) ptr() *bool {
	switch t {
	case isTrue:
		v := true
		return &v
	case isFalse:
		v := false
		return &v
	}
	return nil
}

// blocks reports whether the reference has blockOwnerDeletion: true.
func (r ownerRef) blocks() bool { return r.block == isTrue }

// coordinates reports whether r names the object id names (kube's ownerReferenceMatchesCoordinates).
func (r ownerRef) coordinates(id identity) bool {
	return r.uid == id.UID && r.name == id.Name && r.kind.kind == id.Kind && r.kind.apiVersion == id.APIVersion
}

// toAPI returns the reference as the API spells it.
func (r ownerRef) toAPI() metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.kind.apiVersion, Kind: r.kind.kind, Name: r.name, UID: r.uid,
		Controller: r.controller.ptr(), BlockOwnerDeletion: r.block.ptr()}
}

// The bits of node.state.
const (
	// virtual: the node stands for an owner that dependents name but no watch has shown.
	stateVirtual uint8 = 1 << iota
	// beingDeleted: the object has a deletionTimestamp. A one-way trip.
	stateBeingDeleted
	// deletingDependents: being deleted with the foregroundDeletion finalizer.
	stateDeletingDependents
	// hasOrphan and hasForeground record the object's last seen finalizers, so that the start of an
	// orphaning or foreground deletion is recognised as kube recognises it from the old object.
	stateHasOrphan
	stateHasForeground
)

// node is one object of the graph (kube's node). Its fields are guarded by the graph's mutex.
// Memory per object matters: a node is 96 bytes plus its name and UID, and most nodes have
// neither owners nor dependents.
type node struct {
	uid  types.UID
	name string
	// ns is interned with the unique package rather than a table of the graph's own, so that the
	// namespaces of objects that are gone are dropped with them: a table would keep every
	// namespace ever seen (issue 20's namespace churn). "" for cluster-scoped objects.
	ns   unique.Handle[string]
	kind *kindRef
	// src is the monitor that observed the node (nil for virtual nodes), so that a relist of a
	// resource finds its nodes that are gone.
	src        *source
	owners     []ownerRef
	dependents map[*node]struct{} // nil until the first dependent
	state      uint8
}

func (n *node) is(bit uint8) bool { return n.state&bit != 0 }

func (n *node) set(bit uint8, on bool) {
	if on {
		n.state |= bit
	} else {
		n.state &^= bit
	}
}

func (n *node) namespace() string { return n.ns.Value() }

func (n *node) identity() identity {
	return identity{APIVersion: n.kind.apiVersion, Kind: n.kind.kind, Namespace: n.namespace(), Name: n.name, UID: n.uid}
}

func (n *node) addDependent(d *node) {
	if n.dependents == nil {
		n.dependents = map[*node]struct{}{}
	}
	n.dependents[d] = struct{}{}
}

func (n *node) deleteDependent(d *node) {
	delete(n.dependents, d)
	if len(n.dependents) == 0 {
		n.dependents = nil
	}
}

// blockingDependents are the dependents whose reference to n has blockOwnerDeletion: true.
func (n *node) blockingDependents() []*node {
	var out []*node
	for d := range n.dependents {
		for _, o := range d.owners {
			if o.uid == n.uid && o.blocks() {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// queue is where the graph puts nodes for the workers: client-go's rate-limited work queue.
type queue interface {
	Add(*node)
	AddRateLimited(*node)
}

// graph is the dependency graph, kube's GraphBuilder state: every observed object by UID, with its
// owners and dependents, plus virtual nodes for owners that only references name. One mutex guards
// it: the monitors apply changes under it and the workers read under it.
type graph struct {
	mu    sync.Mutex
	nodes map[types.UID]*node

	kinds map[kindRef]*kindRef

	attemptToDelete queue
	attemptToOrphan queue
	absent          *absentCache
	events          eventRecorder
	sizeChanged     func(int)
}

// eventRecorder records kube's OwnerRefInvalidNamespace warning.
type eventRecorder interface {
	invalidNamespace(dependent identity, owner identity)
}

func newGraph(attemptToDelete, attemptToOrphan queue, absent *absentCache, events eventRecorder, sizeChanged func(int)) *graph {
	if sizeChanged == nil {
		sizeChanged = func(int) {}
	}
	return &graph{nodes: map[types.UID]*node{}, kinds: map[kindRef]*kindRef{},
		attemptToDelete: attemptToDelete, attemptToOrphan: attemptToOrphan, absent: absent, events: events, sizeChanged: sizeChanged}
}

func (g *graph) kind(apiVersion, kind string) *kindRef {
	k := kindRef{apiVersion, kind}
	if p, ok := g.kinds[k]; ok {
		return p
	}
	p := &k
	g.kinds[k] = p
	return p
}

func (g *graph) namespace(ns string) unique.Handle[string] { return unique.Make(ns) }

func (g *graph) ownerRefs(refs []metav1.OwnerReference) []ownerRef {
	if len(refs) == 0 {
		return nil
	}
	out := make([]ownerRef, len(refs))
	for i, r := range refs {
		uid, name := r.UID, r.Name
		if owner, ok := g.nodes[uid]; ok {
			// One copy of the UID and name for the owner and every reference to it.
			uid = owner.uid
			if owner.name == name {
				name = owner.name
			}
		}
		out[i] = ownerRef{uid: uid, name: name, kind: g.kind(r.APIVersion, r.Kind),
			controller: toTristate(r.Controller), block: toTristate(r.BlockOwnerDeletion)}
	}
	return out
}

// len returns the number of nodes, virtual ones included.
func (g *graph) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes)
}
