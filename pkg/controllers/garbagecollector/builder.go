package garbagecollector

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// This file is kube's GraphBuilder.processGraphChanges: how an observed change, or a virtual delete a
// worker decided, changes the graph and which nodes it hands to the workers. The caller holds g.mu.

// observe applies an object that a monitor of src listed or saw added or modified, as kube's
// add and update events.
func (g *graph) observe(src *source, m *objectMeta) {
	existing, found := g.nodes[m.UID]
	if found && existing.is(stateVirtual) {
		// The object named by references is seen at last: dependents that named it with other
		// coordinates may be invalid (the bad child -> good parent order; addDependentToOwners
		// handles the other one).
		observed := identity{APIVersion: src.kind.apiVersion, Kind: src.kind.kind, Namespace: m.Namespace, Name: m.Name, UID: m.UID}
		if observed != existing.identity() {
			_, invalid := partitionDependents(existing.dependents, observed)
			for _, dep := range invalid {
				if observed.Namespace != "" && dep.namespace() != observed.Namespace {
					g.reportInvalidNamespace(dep, observed.UID)
				}
				g.attemptToDelete.Add(dep)
			}
			existing.kind, existing.ns, existing.name = src.kind, g.namespace(m.Namespace), m.Name
		}
	}
	if !found {
		n := &node{uid: m.UID, name: m.Name, ns: g.namespace(m.Namespace), kind: src.kind, src: src,
			owners: g.ownerRefs(m.OwnerReferences)}
		n.set(stateBeingDeleted, m.beingDeleted())
		n.set(stateDeletingDependents, m.beingDeleted() && m.hasFinalizer(finalizerDeleteDependents))
		g.nodes[n.uid] = n
		src.nodes++
		g.addDependentToOwners(n, n.owners)
		g.transitions(n, false, 0, m)
		g.sizeChanged(len(g.nodes))
		return
	}
	wasObserved, old := !existing.is(stateVirtual), existing.state
	if !wasObserved {
		existing.set(stateVirtual, false)
		existing.src = src
		src.nodes++
	}
	owners := g.ownerRefs(m.OwnerReferences)
	added, removed, changed := referencesDiffs(existing.owners, owners)
	if len(added) != 0 || len(removed) != 0 || len(changed) != 0 {
		// A blocking reference that went, or stopped blocking, may let a foreground deletion finish.
		g.unblockOwners(removed, changed)
		existing.owners = owners
		g.addDependentToOwners(existing, added)
		g.removeDependentFromOwners(existing, removed)
	}
	if m.beingDeleted() {
		existing.set(stateBeingDeleted, true)
	}
	g.transitions(existing, wasObserved, old, m)
}

// transitions starts an orphaning or a foreground deletion when the object has just begun one: it
// is being deleted with the finalizer now, and was not (or was never seen: hadOld false) before.
// old is the node's state before this change.
func (g *graph) transitions(n *node, hadOld bool, old uint8, m *objectMeta) {
	oldBeingDeleted, oldOrphan, oldForeground := old&stateBeingDeleted != 0, old&stateHasOrphan != 0, old&stateHasForeground != 0
	orphan, foreground := m.hasFinalizer(finalizerOrphanDependents), m.hasFinalizer(finalizerDeleteDependents)
	n.set(stateHasOrphan, orphan)
	n.set(stateHasForeground, foreground)
	if m.beingDeleted() && orphan && (!hadOld || !oldBeingDeleted || !oldOrphan) {
		g.attemptToOrphan.Add(n)
		return
	}
	if m.beingDeleted() && foreground && (!hadOld || !oldBeingDeleted || !oldForeground) {
		n.set(stateDeletingDependents, true)
		for dep := range n.dependents {
			g.attemptToDelete.Add(dep)
		}
		g.attemptToDelete.Add(n)
	}
}

// observeDelete applies an object that a monitor saw deleted (or found gone at a relist).
func (g *graph) observeDelete(src *source, m *objectMeta) {
	existing, found := g.nodes[m.UID]
	if !found {
		return
	}
	id := identity{APIVersion: src.kind.apiVersion, Kind: src.kind.kind, Namespace: m.Namespace, Name: m.Name, UID: m.UID}
	g.removeNode(existing, id)
}

// virtualDelete applies a worker's finding that the object id names does not exist (kube's virtual
// delete event).
func (g *graph) virtualDelete(id identity) {
	existing, found := g.nodes[id.UID]
	if !found {
		return
	}
	if existing.is(stateVirtual) {
		// Not sure of the virtual node's coordinates: dependents may name it otherwise.
		matching, nonmatching := partitionDependents(existing.dependents, id)
		if len(nonmatching) > 0 {
			if len(matching) > 0 {
				g.absent.add(id)
				for _, dep := range matching {
					g.attemptToDelete.Add(dep)
				}
			}
			if existing.identity() == id {
				// Try the next identity the other dependents give it.
				if alt := alternateOwnerIdentity(nonmatching, id); alt != nil {
					existing.kind, existing.ns, existing.name = g.kind(alt.APIVersion, alt.Kind), g.namespace(alt.Namespace), alt.Name
					g.attemptToDelete.AddRateLimited(existing)
				}
			}
			return
		}
	} else if existing.identity() != id {
		// An observed object disagrees with the coordinates found absent: keep it, but the
		// dependents that named those coordinates lost their owner.
		matching, _ := partitionDependents(existing.dependents, id)
		if len(matching) > 0 {
			g.absent.add(id)
			for _, dep := range matching {
				g.attemptToDelete.Add(dep)
			}
		}
		return
	}
	g.removeNode(existing, id)
}

// unwatch detaches the nodes of a monitor whose resource is no longer served. Unlike a relist that
// finds nothing, that says nothing of the objects: they may still be stored (a CRD whose versions
// were all turned off, or that cannot be served), and taking them for deleted would delete their
// dependents. As kube keeps the nodes of a removed monitor, a node with dependents stays, as a
// virtual node that a worker checks against the API (retrying while its kind is not served); the
// others leave the graph, and only owners waiting for their dependents hear of it. The caller
// holds g.mu.
func (g *graph) unwatch(s *source) {
	if s.nodes == 0 {
		return
	}
	for _, n := range g.nodes {
		if n.src != s {
			continue
		}
		n.src = nil
		s.nodes--
		if len(n.dependents) > 0 {
			n.set(stateVirtual, true)
			g.attemptToDelete.Add(n)
			continue
		}
		delete(g.nodes, n.uid)
		g.removeDependentFromOwners(n, n.owners)
		for _, o := range n.owners {
			if owner, ok := g.nodes[o.uid]; ok && owner.is(stateDeletingDependents) {
				g.attemptToDelete.Add(owner)
			}
		}
	}
	g.sizeChanged(len(g.nodes))
}

// removeNode takes n out of the graph and hands its dependents, and owners that wait for their
// dependents, to attemptToDelete. id is the identity the delete was seen as.
func (g *graph) removeNode(n *node, id identity) {
	delete(g.nodes, n.uid)
	if n.src != nil {
		n.src.nodes--
	}
	g.removeDependentFromOwners(n, n.owners)
	if len(n.dependents) > 0 {
		g.absent.add(id)
	}
	for dep := range n.dependents {
		g.attemptToDelete.Add(dep)
	}
	for _, o := range n.owners {
		if owner, ok := g.nodes[o.uid]; ok && owner.is(stateDeletingDependents) {
			// It may be waiting for this dependent alone.
			g.attemptToDelete.Add(owner)
		}
	}
	g.sizeChanged(len(g.nodes))
}

// addDependentToOwners adds n to the dependents of owners, creating a virtual node (and asking a
// worker to check it against the API) for an owner not in the graph. A reference that may be
// invalid (its owner seen in another namespace or with other coordinates) sends n to the workers.
func (g *graph) addDependentToOwners(n *node, owners []ownerRef) {
	potentiallyInvalid := false
	for _, o := range owners {
		owner, ok := g.nodes[o.uid]
		if !ok {
			owner = &node{uid: o.uid, name: o.name, kind: o.kind, ns: n.ns, state: stateVirtual}
			g.nodes[o.uid] = owner
		}
		owner.addDependent(n)
		switch {
		case !ok:
			g.attemptToDelete.Add(owner)
		case potentiallyInvalid:
		case owner.namespace() != "" && owner.namespace() != n.namespace():
			// A namespaced owner in another namespace: an owner reference never crosses
			// namespaces, so the dependent's own namespace holds no such owner.
			if !owner.is(stateVirtual) {
				g.reportInvalidNamespace(n, o.uid)
			}
			potentiallyInvalid = true
		case !o.coordinates(owner.identity()):
			potentiallyInvalid = true
		case owner.namespace() == "" && n.namespace() != "" && owner.is(stateVirtual):
			// A virtual cluster-scoped owner of a namespaced dependent may be a missing
			// namespaced object a cluster-scoped child named (kube issue 98040): check.
			potentiallyInvalid = true
		}
	}
	if potentiallyInvalid {
		g.attemptToDelete.Add(n)
	}
}

func (g *graph) removeDependentFromOwners(n *node, owners []ownerRef) {
	for _, o := range owners {
		if owner, ok := g.nodes[o.uid]; ok {
			owner.deleteDependent(n)
		}
	}
}

// unblockOwners hands to attemptToDelete the owners of references that blocked their deletion and
// were removed or stopped blocking.
func (g *graph) unblockOwners(removed []ownerRef, changed [][2]ownerRef) {
	for _, r := range removed {
		if r.blocks() {
			if owner, ok := g.nodes[r.uid]; ok {
				g.attemptToDelete.Add(owner)
			}
		}
	}
	for _, c := range changed {
		if c[0].blocks() && !c[1].blocks() {
			if owner, ok := g.nodes[c[1].uid]; ok {
				g.attemptToDelete.Add(owner)
			}
		}
	}
}

// reportInvalidNamespace records kube's OwnerRefInvalidNamespace warning on n for its reference to
// ownerUID.
func (g *graph) reportInvalidNamespace(n *node, ownerUID types.UID) {
	if g.events == nil {
		return
	}
	for _, o := range n.owners {
		if o.uid == ownerUID {
			g.events.invalidNamespace(n.identity(), identity{APIVersion: o.kind.apiVersion, Kind: o.kind.kind,
				Name: o.name, UID: o.uid, Namespace: n.namespace()})
			return
		}
	}
}

// referencesDiffs compares two lists of owner references by UID (kube's referencesDiffs); changed
// pairs are (old, new).
func referencesDiffs(old, new []ownerRef) (added, removed []ownerRef, changed [][2]ownerRef) {
	for _, n := range new {
		i := slices.IndexFunc(old, func(o ownerRef) bool { return o.uid == n.uid })
		switch {
		case i < 0:
			added = append(added, n)
		case old[i] != n:
			changed = append(changed, [2]ownerRef{old[i], n})
		}
	}
	for _, o := range old {
		if !slices.ContainsFunc(new, func(n ownerRef) bool { return n.uid == o.uid }) {
			removed = append(removed, o)
		}
	}
	return added, removed, changed
}

// partitionDependents splits dependents into those whose reference to id.UID matches id's
// coordinates and those with a reference that does not (a dependent can be in both).
func partitionDependents(dependents map[*node]struct{}, id identity) (matching, nonmatching []*node) {
	for dep := range dependents {
		match, mismatch := false, false
		if id.Namespace != "" && id.Namespace != dep.namespace() {
			mismatch = true
		} else {
			for _, o := range dep.owners {
				if o.uid == id.UID {
					if o.coordinates(id) {
						match = true
					} else {
						mismatch = true
					}
				}
			}
		}
		if match {
			matching = append(matching, dep)
		}
		if mismatch {
			nonmatching = append(nonmatching, dep)
		}
	}
	return matching, nonmatching
}

// less orders identities as kube's referenceLessThan: kind, apiVersion, namespace, name, uid.
func (a identity) less(b identity) bool {
	switch {
	case a.Kind != b.Kind:
		return a.Kind < b.Kind
	case a.APIVersion != b.APIVersion:
		return a.APIVersion < b.APIVersion
	case a.Namespace != b.Namespace:
		return a.Namespace < b.Namespace
	case a.Name != b.Name:
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

// alternateOwnerIdentity is kube's getAlternateOwnerIdentity: among the coordinates deps give to
// absent.UID other than absent's, the first after absent in identity order, else the first.
func alternateOwnerIdentity(deps []*node, absent identity) *identity {
	clusterScoped := absent.Namespace == ""
	seen := map[identity]bool{absent: true}
	var first, following *identity
	for _, dep := range deps {
		for _, o := range dep.owners {
			if o.uid != absent.UID {
				continue
			}
			if o.coordinates(absent) && (clusterScoped || absent.Namespace == dep.namespace()) {
				continue
			}
			ref := identity{APIVersion: o.kind.apiVersion, Kind: o.kind.kind, Name: o.name, UID: o.uid, Namespace: dep.namespace()}
			if clusterScoped && ref.APIVersion == absent.APIVersion && ref.Kind == absent.Kind {
				ref.Namespace = "" // this kind is known to be cluster-scoped
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			if first == nil || ref.less(*first) {
				r := ref
				first = &r
			}
			if absent.less(ref) && (following == nil || ref.less(*following)) {
				r := ref
				following = &r
			}
		}
	}
	if following != nil {
		return following
	}
	return first
}
