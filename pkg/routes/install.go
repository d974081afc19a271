package routes

import (
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// InstallOptions tune the route table.
type InstallOptions struct {
	// Profiling adds /debug/pprof and the routes below it, as --profiling does.
	Profiling bool
}

// Install computes the route table of api as kube-apiserver's installer would: for each group
// version, resources and subresources sorted by storage key ("namespaces" < "namespaces/finalize"),
// each with its actions in kube's order, the all-namespaces LIST and WATCHLIST after a namespaced
// resource's own routes; then the non-resource routes. It is a pure function of its arguments.
func Install(api *API, opts InstallOptions) Table {
	routes := make([]Route, 0, estimateRoutes(api))
	for _, g := range api.Groups() {
		for vi := range g.Versions {
			v := &g.Versions[vi]
			routes = installVersion(routes, g.Name, v)
		}
	}
	routes = append(routes, nonResourceRoutes(api, opts)...)
	return Table{Routes: routes}
}

// estimateRoutes sizes the table so that it is allocated once: a route per verb plus the watch
// list and all-namespaces routes of each resource, a route per verb or connect method (twice with
// a subpath) of each subresource, the discovery routes of each group and version, the fixed ones.
func estimateRoutes(api *API) int {
	n := 32
	for _, g := range api.Groups() {
		n++
		for _, v := range g.Versions {
			n++
			for _, r := range v.Resources {
				n += len(r.Verbs) + 3
				for _, s := range r.Subresources {
					n += len(s.Verbs) + 1 + 2*len(s.ConnectMethods)
				}
			}
		}
	}
	return n
}

// storageKey is one registered path below a group version: a resource or resource/subresource.
type storageKey struct {
	key      string
	resource *Resource
	sub      *Subresource
}

func installVersion(routes []Route, group string, v *Version) []Route {
	keys := make([]storageKey, 0, len(v.Resources)*2)
	for ri := range v.Resources {
		r := &v.Resources[ri]
		keys = append(keys, storageKey{key: r.Plural, resource: r})
		for si := range r.Subresources {
			keys = append(keys, storageKey{key: r.Plural + "/" + r.Subresources[si].Name, resource: r, sub: &r.Subresources[si]})
		}
	}
	slices.SortFunc(keys, func(a, b storageKey) int { return strings.Compare(a.key, b.key) })

	in := installer{prefix: GroupVersionPath(group, v.Name), gv: schema.GroupVersion{Group: group, Version: v.Name}}
	in.gvID, in.tag = groupVersionID(group, v.Name)
	for _, k := range keys {
		routes = in.install(routes, k.resource, k.sub)
	}
	return routes
}

// installer computes the routes of one group version.
type installer struct {
	prefix string
	gv     schema.GroupVersion
	// gvID is what OpenAPI operation IDs insert for the group version (CoreV1); tag its tag.
	gvID, tag string
	// buf collects the strings of one storage key, which share one allocation.
	buf []byte
}

// action is one route of a storage key before it is named.
type action struct {
	action        Action
	method        string
	watch         bool // under watch/
	item          bool // the item path rather than the collection
	withPath      bool // {path:*} appended
	allNamespaces bool
}

// span locates a string in the installer's buffer.
type span struct{ start, end int }

func (in *installer) install(routes []Route, r *Resource, sub *Subresource) []Route {
	verbs, connect, connectSubpath := r.Verbs, []string(nil), false
	subName, objectKind := "", in.gv.WithKind(r.Kind)
	if sub != nil {
		verbs, connect, connectSubpath = sub.Verbs, sub.ConnectMethods, sub.ConnectSubpath
		subName, objectKind = sub.Name, sub.GroupVersionKind(in.gv)
	}
	has := func(v string) bool { return slices.Contains(verbs, v) }

	var buf [16]action
	acts := buf[:0]
	add := func(ok bool, a action) {
		if ok {
			acts = append(acts, a)
		}
	}
	// A subresource's collection routes (LIST, POST) go to its item path, as in kube.
	collectionIsItem := sub != nil
	add(has(VerbList), action{action: ActionList, method: http.MethodGet, item: collectionIsItem})
	add(has(VerbCreate), action{action: ActionPost, method: http.MethodPost, item: collectionIsItem})
	add(has(VerbDeleteCollection), action{action: ActionDeleteCollection, method: http.MethodDelete, item: collectionIsItem})
	add(has(VerbWatch) && has(VerbList), action{action: ActionWatchList, method: http.MethodGet, watch: true, item: collectionIsItem})
	add(has(VerbGet), action{action: ActionGet, method: http.MethodGet, item: true})
	add(has(VerbUpdate), action{action: ActionPut, method: http.MethodPut, item: true})
	add(has(VerbPatch), action{action: ActionPatch, method: http.MethodPatch, item: true})
	add(has(VerbDelete), action{action: ActionDelete, method: http.MethodDelete, item: true})
	add(has(VerbWatch), action{action: ActionWatch, method: http.MethodGet, watch: true, item: true})
	for _, m := range connect {
		add(true, action{action: ActionConnect, method: m, item: true})
	}
	if connectSubpath {
		for _, m := range connect {
			add(true, action{action: ActionConnect, method: m, item: true, withPath: true})
		}
	}
	if r.Namespaced && sub == nil {
		add(has(VerbList), action{action: ActionList, method: http.MethodGet, allNamespaces: true})
		add(has(VerbWatch) && has(VerbList), action{action: ActionWatchList, method: http.MethodGet, watch: true, allNamespaces: true})
	}

	// Every string of this key goes into one buffer, turned into one string at the end: the table
	// of a thousand CRDs is computed with a few allocations per resource instead of a dozen per route.
	titledSub := title(subName)
	watchable := has(VerbWatch)
	type names struct{ path, op, id, doc span }
	var spanBuf [16]names
	spans := spanBuf[:len(acts)]
	b := in.buf[:0]
	for i, a := range acts {
		start := len(b)
		b = in.appendPath(b, r, subName, a)
		spans[i].path = span{start, len(b)}
		start = len(b)
		b = appendOperationName(b, a.action, a.method, r.Kind, titledSub, r.Namespaced, a.allNamespaces, a.withPath)
		spans[i].op = span{start, len(b)}
		start = len(b)
		b = appendOperationID(b, b[spans[i].op.start:spans[i].op.end], verbPrefixLen(a.action), in.gvID)
		spans[i].id = span{start, len(b)}
		start = len(b)
		b = appendDoc(b, a.action, a.method, r.Kind, subName, watchable)
		spans[i].doc = span{start, len(b)}
	}
	in.buf = b
	all := string(b)
	str := func(s span) string { return all[s.start:s.end] }

	for i, a := range acts {
		scope := RouteScopeCluster
		switch {
		case a.allNamespaces:
			scope = RouteScopeAllNamespaces
		case r.Namespaced:
			scope = RouteScopeNamespaced
		}
		routes = append(routes, Route{
			Method:      a.method,
			Path:        str(spans[i].path),
			Action:      a.action,
			Verb:        discoveryVerb(a.action, a.method),
			Operation:   str(spans[i].op),
			OperationID: str(spans[i].id),
			Tag:         in.tag,
			Scope:       scope,
			Group:       in.gv.Group,
			Version:     in.gv.Version,
			Resource:    r.Plural,
			Subresource: subName,
			Kind:        r.Kind,
			ObjectKind:  metav1.GroupVersionKind(objectKind),
			Doc:         str(spans[i].doc),
			LongRunning: a.action == ActionWatch || a.action == ActionWatchList || a.action == ActionConnect,
			Deprecated:  a.action == ActionWatch || a.action == ActionWatchList,
			Consumes:    consumes(a.action, r.Custom),
			Produces:    produces(a.action),
		})
	}
	return routes
}

// appendPath appends a route's path: the group version prefix, watch/ for the deprecated watch
// routes, namespaces/{namespace}/ for namespaced routes, the resource, then /{name}[/<sub>] for
// item routes and /{path:*} for subpath routes.
func (in *installer) appendPath(b []byte, r *Resource, sub string, a action) []byte {
	b = append(append(b, in.prefix...), '/')
	if a.watch {
		b = append(b, "watch/"...)
	}
	if r.Namespaced && !a.allNamespaces {
		b = append(b, "namespaces/{namespace}/"...)
	}
	b = append(b, r.Plural...)
	if a.item {
		b = append(b, "/{name}"...)
		if sub != "" {
			b = append(append(b, '/'), sub...)
		}
	}
	if a.withPath {
		b = append(b, "/{path:*}"...)
	}
	return b
}

// discoveryVerb maps an action to the verb discovery and authorization use. A CONNECT route's verb
// follows its HTTP method, so pods/exec lists create and get.
func discoveryVerb(a Action, method string) string {
	switch a {
	case ActionList:
		return VerbList
	case ActionPost:
		return VerbCreate
	case ActionDeleteCollection:
		return VerbDeleteCollection
	case ActionWatch, ActionWatchList:
		return VerbWatch
	case ActionGet:
		return VerbGet
	case ActionPut:
		return VerbUpdate
	case ActionPatch:
		return VerbPatch
	case ActionDelete:
		return VerbDelete
	case ActionConnect:
		switch method {
		case http.MethodGet:
			return VerbGet
		case http.MethodPost:
			return VerbCreate
		case http.MethodPut:
			return VerbUpdate
		case http.MethodPatch:
			return VerbPatch
		case http.MethodDelete:
			return VerbDelete
		}
	}
	return ""
}

// Media type lists shared by routes (see Route.Consumes).
var (
	mediaObject         = []string{MediaJSON, MediaYAML}
	mediaStream         = []string{MediaJSON, MediaYAML, MediaJSONWatch}
	mediaPatchBuiltin   = []string{MediaJSONPatch, MediaMergePatch, MediaStrategicPatch, MediaApplyPatch}
	mediaPatchCustom    = []string{MediaJSONPatch, MediaMergePatch, MediaApplyPatch}
	mediaAnything       = []string{MediaAny}
	mediaText           = []string{MediaText}
	mediaJSONOnly       = []string{MediaJSON}
	mediaDiscoveryRoots = []string{MediaJSON, MediaAggregatedDiscovery}
)

// consumes lists the request bodies a route accepts: objects as JSON or YAML, patches in the four
// patch types (custom resources take no strategic merge patch), DeleteOptions for deletes.
func consumes(a Action, custom bool) []string {
	switch a {
	case ActionPost, ActionPut, ActionDelete, ActionDeleteCollection:
		return mediaObject
	case ActionPatch:
		if custom {
			return mediaPatchCustom
		}
		return mediaPatchBuiltin
	case ActionConnect:
		return mediaAnything
	}
	return nil
}

// produces lists the response media types; lists and watches also stream watch events.
func produces(a Action) []string {
	switch a {
	case ActionList, ActionWatch, ActionWatchList:
		return mediaStream
	case ActionConnect:
		return mediaAnything
	}
	return mediaObject
}
