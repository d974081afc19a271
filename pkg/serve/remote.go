package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/pkg/routes"
)

// Remote is the part of the API that other servers serve (APIServices with a service), with what
// is needed to place it among the local API as kube's aggregator does.
type Remote struct {
	// GroupVersions are the remote group versions.
	GroupVersions []RemoteGroupVersion
	// LocalPriorities are the priorities the local group versions' APIServices give them: /apis and
	// aggregated discovery order groups by them, and a remote group goes where its priority puts it
	// among them. A local group without one keeps its place.
	LocalPriorities map[schema.GroupVersion]Priority
}

// Priority is an APIService's spec.groupPriorityMinimum and spec.versionPriority.
type Priority struct {
	Group, Version int32
}

// RemoteGroupVersion is one group version another server serves.
type RemoteGroupVersion struct {
	Group, Version string
	Priority       Priority
	// Handler serves every request for /apis/<group>/<version> and below: the proxy to the server.
	Handler http.Handler
	// Discovery is the version's entry in aggregated discovery, as last fetched from the server; nil
	// lists it Stale, with no resources, as kube does until a fetch succeeds.
	Discovery *apidiscoveryv2.APIVersionDiscovery
	// OpenAPIV2 is the server's /openapi/v2 (JSON) limited to the group version's paths; nil until
	// fetched. The server's /openapi/v2 merges it in, after the local spec.
	OpenAPIV2 []byte
	// OpenAPIV3URL is the server-relative URL the server's /openapi/v3 index gives the group version's
	// key (apis/<group>/<version>); empty until fetched. A request for the key's document is proxied
	// to the server, whose URL carries its own hash.
	OpenAPIV3URL string
}

// apiServiceName is the name of the APIService of a group version: kube breaks ties of priority by it.
func apiServiceName(group, version string) string { return version + "." + group }

// remoteState is the remote part of an API state, indexed for the request path.
type remoteState struct {
	byGV map[gvKey]*RemoteGroupVersion
	// groupDocs are /apis/<group> of the groups that have a remote version, local ones merged in.
	groupDocs map[string][]byte
}

// SetRemote makes remote the group versions the server proxies, with their discovery and OpenAPI
// merged into the local API's. Requests in flight finish with what they started with.
func (s *Server) SetRemote(remote *Remote) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	prev := s.mux.state.Load()
	st, err := s.cfg.newAPIStateWithRemote(prev.api, remote, prev)
	if err != nil {
		return err
	}
	s.mux.state.Store(st)
	return nil
}

type gvKey struct{ group, version string }

// handler returns the proxy of the remote group version path p is below, or the handler of
// /apis/<group> for a group with a remote version.
func (rs *remoteState) handler(p string) http.Handler {
	rest, ok := strings.CutPrefix(p, "/apis/")
	if !ok {
		return nil
	}
	group, rest, hasVersion := strings.Cut(rest, "/")
	if !hasVersion || rest == "" {
		if doc, ok := rs.groupDocs[group]; ok {
			return groupDocHandler(doc)
		}
		return nil
	}
	version, _, _ := strings.Cut(rest, "/")
	if gv, ok := rs.byGV[gvKey{group, version}]; ok {
		return gv.Handler
	}
	return nil
}

// groupDocHandler serves a precomputed /apis/<group> document.
type groupDocHandler []byte

func (b groupDocHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	_, _ = w.Write(newline)
}

// orderKey places an APIService, or a group, in kube's order: higher priority first, then by name.
type orderKey struct {
	priority int32
	name     string
}

func (a orderKey) less(b orderKey) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	return a.name < b.name
}

// mergeRemote adds the remote group versions to the local discovery documents: /apis in the
// aggregator's order (by the first of a group's APIServices sorted by groupPriorityMinimum and
// name), aggregated /apis in the discovery manager's (by a group's highest groupPriorityMinimum,
// then its name), and /apis/<group> with its versions by versionPriority. It returns the remote
// state for the request path.
func mergeRemote(d *routes.Discovery, remote *Remote) (*remoteState, error) {
	rs := &remoteState{byGV: map[gvKey]*RemoteGroupVersion{}, groupDocs: map[string][]byte{}}
	groups := discoveryGroups{}
	for gv, p := range remote.LocalPriorities {
		groups.note(gv.Group, gv.Version, p, nil)
	}
	for i := range remote.GroupVersions {
		r := &remote.GroupVersions[i]
		if r.Group == "" {
			continue // the legacy group is never proxied
		}
		rs.byGV[gvKey{r.Group, r.Version}] = r
		groups.note(r.Group, r.Version, r.Priority, r)
	}
	var remoteGroups []string
	for name := range groups {
		if groups.isRemote(name) && d.Groups[name] == nil {
			remoteGroups = append(remoteGroups, name)
		}
	}
	d.GroupList.Groups = groups.mergeLegacy(d.GroupList.Groups, remoteGroups)
	for _, g := range d.GroupList.Groups {
		if !groups.isRemote(g.Name) {
			continue
		}
		single := g
		single.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		b, err := json.Marshal(&single)
		if err != nil {
			return nil, fmt.Errorf("encoding discovery document /apis/%s: %w", g.Name, err)
		}
		rs.groupDocs[g.Name] = b
	}
	d.AggregatedGroups.Items = groups.mergeAggregated(d.AggregatedGroups.Items, remoteGroups)
	return rs, nil
}

// groupInfo is what the discovery documents order a group by, and its versions.
type groupInfo struct {
	legacy, aggregated orderKey
	versions           []versionInfo
}

// discoveryGroups are the groups an APIService names, local or remote, by name.
type discoveryGroups map[string]*groupInfo

// note adds a group version with its APIService's priorities; remote is nil for a local one.
func (groups discoveryGroups) note(group, version string, p Priority, remote *RemoteGroupVersion) {
	g := groups[group]
	legacy := orderKey{p.Group, apiServiceName(group, version)}
	if g == nil {
		g = &groupInfo{legacy: legacy, aggregated: orderKey{p.Group, group}}
		groups[group] = g
	}
	if legacy.less(g.legacy) {
		g.legacy = legacy
	}
	if p.Group > g.aggregated.priority {
		g.aggregated.priority = p.Group
	}
	g.versions = append(g.versions, versionInfo{version: version, priority: p.Version, remote: remote})
}

// isRemote says whether a version of group is served remotely.
func (groups discoveryGroups) isRemote(group string) bool {
	g := groups[group]
	return g != nil && slices.ContainsFunc(g.versions, func(v versionInfo) bool { return v.remote != nil })
}

// byKey orders group names by key, then by name.
func (groups discoveryGroups) byKey(key func(*groupInfo) orderKey) func(a, b string) int {
	return func(a, b string) int {
		ka, kb := key(groups[a]), key(groups[b])
		switch {
		case ka.less(kb):
			return -1
		case kb.less(ka):
			return 1
		}
		return strings.Compare(a, b)
	}
}

// mergeLegacy returns the groups of /apis with the remote-only groups (sorted in place) in the
// aggregator's order, and the remote versions added to the local groups that have some.
func (groups discoveryGroups) mergeLegacy(local []metav1.APIGroup, remoteGroups []string) []metav1.APIGroup {
	slices.SortFunc(remoteGroups, groups.byKey(func(g *groupInfo) orderKey { return g.legacy }))
	var list []metav1.APIGroup
	pending := remoteGroups
	flush := func(before *orderKey) {
		for len(pending) > 0 && (before == nil || groups[pending[0]].legacy.less(*before)) {
			list = append(list, remoteAPIGroup(pending[0], groups[pending[0]].versions, nil))
			pending = pending[1:]
		}
	}
	for _, g := range local {
		if info := groups[g.Name]; info != nil {
			flush(&info.legacy)
			if groups.isRemote(g.Name) {
				g = remoteAPIGroup(g.Name, info.versions, g.Versions)
			}
		}
		list = append(list, g)
	}
	flush(nil)
	return list
}

// mergeAggregated is mergeLegacy for aggregated /apis, in the discovery manager's order.
func (groups discoveryGroups) mergeAggregated(local []apidiscoveryv2.APIGroupDiscovery, remoteGroups []string) []apidiscoveryv2.APIGroupDiscovery {
	slices.SortFunc(remoteGroups, groups.byKey(func(g *groupInfo) orderKey { return g.aggregated }))
	var items []apidiscoveryv2.APIGroupDiscovery
	pending := remoteGroups
	flush := func(before *orderKey) {
		for len(pending) > 0 && (before == nil || groups[pending[0]].aggregated.less(*before)) {
			items = append(items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: pending[0]},
				Versions: aggregatedVersions(groups[pending[0]].versions, nil)})
			pending = pending[1:]
		}
	}
	for _, item := range local {
		if info := groups[item.Name]; info != nil {
			flush(&info.aggregated)
			if groups.isRemote(item.Name) {
				item.Versions = aggregatedVersions(info.versions, item.Versions)
			}
		}
		items = append(items, item)
	}
	flush(nil)
	return items
}

// versionInfo is one version of a group as the APIServices say: local (remote nil) or remote.
type versionInfo struct {
	version  string
	priority int32
	remote   *RemoteGroupVersion
}

// sortedVersions orders a group's versions as kube does: by versionPriority, then kube-aware
// version order. Local versions without an APIService follow, in their local order.
func sortedVersions(infos []versionInfo, local []string) []versionInfo {
	out := slices.Clone(infos)
	slices.SortStableFunc(out, func(a, b versionInfo) int {
		if a.priority != b.priority {
			if a.priority > b.priority {
				return -1
			}
			return 1
		}
		return -version.CompareKubeAwareVersionStrings(a.version, b.version)
	})
	for _, v := range local {
		if !slices.ContainsFunc(out, func(i versionInfo) bool { return i.version == v }) {
			out = append(out, versionInfo{version: v})
		}
	}
	return out
}

// remoteAPIGroup is /apis/<group> of a group with remote versions; local are the group's local
// versions, if any.
func remoteAPIGroup(group string, infos []versionInfo, local []metav1.GroupVersionForDiscovery) metav1.APIGroup {
	var localNames []string
	for _, v := range local {
		localNames = append(localNames, v.Version)
	}
	g := metav1.APIGroup{Name: group}
	for _, v := range sortedVersions(infos, localNames) {
		if v.remote == nil && !slices.Contains(localNames, v.version) {
			continue // an APIService of a version this server does not serve
		}
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v.version, Version: v.version})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

// aggregatedVersions are a group's versions in aggregated discovery, remote ones as fetched.
func aggregatedVersions(infos []versionInfo, local []apidiscoveryv2.APIVersionDiscovery) []apidiscoveryv2.APIVersionDiscovery {
	localByName := map[string]apidiscoveryv2.APIVersionDiscovery{}
	var localNames []string
	for _, v := range local {
		localByName[v.Version] = v
		localNames = append(localNames, v.Version)
	}
	var out []apidiscoveryv2.APIVersionDiscovery
	for _, v := range sortedVersions(infos, localNames) {
		switch {
		case v.remote != nil && v.remote.Discovery != nil:
			d := *v.remote.Discovery
			d.Version = v.version
			out = append(out, d)
		case v.remote != nil:
			out = append(out, apidiscoveryv2.APIVersionDiscovery{Version: v.version, Freshness: apidiscoveryv2.DiscoveryFreshnessStale})
		default:
			if l, ok := localByName[v.version]; ok {
				out = append(out, l)
			}
		}
	}
	return out
}

// remoteOpenAPI is what the OpenAPI documents take from the remote group versions.
type remoteOpenAPI struct {
	// v2 are the remote specs in the order kube's aggregator merges them: by the group's highest
	// groupPriorityMinimum (versionPriority within a group), then by APIService name.
	v2 []*RemoteGroupVersion
	// v3 are the keys of the v3 index served by remote servers.
	v3 map[string]*RemoteGroupVersion
}

// openAPI returns the remote part of the OpenAPI documents; nil when nothing is remote.
func (rs *remoteState) openAPI() *remoteOpenAPI {
	if rs == nil {
		return nil
	}
	o := &remoteOpenAPI{v3: map[string]*RemoteGroupVersion{}}
	groupPriority := map[string]int32{}
	for _, r := range rs.byGV {
		if p, ok := groupPriority[r.Group]; !ok || r.Priority.Group > p {
			groupPriority[r.Group] = r.Priority.Group
		}
		if r.OpenAPIV2 != nil {
			o.v2 = append(o.v2, r)
		}
		if r.OpenAPIV3URL != "" {
			o.v3["apis/"+r.Group+"/"+r.Version] = r
		}
	}
	slices.SortFunc(o.v2, func(a, b *RemoteGroupVersion) int {
		pa, pb := groupPriority[a.Group], groupPriority[b.Group]
		if a.Group == b.Group {
			pa, pb = a.Priority.Version, b.Priority.Version
		}
		if pa != pb {
			if pa > pb {
				return -1
			}
			return 1
		}
		return strings.Compare(apiServiceName(a.Group, a.Version), apiServiceName(b.Group, b.Version))
	})
	if len(o.v2) == 0 && len(o.v3) == 0 {
		return nil
	}
	return o
}

// initExtensions gives every local definition that a remote spec also defines an extensions map.
// kube-openapi's merge keeps one definition for a name the two specs define alike and then adds the
// remote's x-kubernetes-group-version-kind to the local one, writing into its extensions map, which
// a definition with no extension does not have (a panic). kube-apiserver's own definitions of the
// kinds an extension server also registers (APIGroup, Status, ...) always carry their kinds, so it
// never meets the nil map; apictl's do not all.
func initExtensions(local, remote *spec.Swagger) {
	for name := range remote.Definitions {
		if d, ok := local.Definitions[name]; ok && d.Extensions == nil {
			d.Extensions = spec.Extensions{}
			local.Definitions[name] = d
		}
	}
}

// mergeV2 merges the remote specs into the local one as kube's aggregator does: paths the local spec
// has win, conflicting definitions and parameters of a remote spec are renamed.
func (o *remoteOpenAPI) mergeV2(local *spec.Swagger) error {
	if o == nil {
		return nil
	}
	for _, r := range o.v2 {
		remote := &spec.Swagger{}
		if err := json.Unmarshal(r.OpenAPIV2, remote); err != nil {
			return fmt.Errorf("reading the OpenAPI v2 of %s: %w", apiServiceName(r.Group, r.Version), err)
		}
		initExtensions(local, remote)
		if err := aggregator.MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters(local, remote); err != nil {
			return fmt.Errorf("merging the OpenAPI v2 of %s: %w", apiServiceName(r.Group, r.Version), err)
		}
	}
	return nil
}
