package routes

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// connectSubresources are the subresources kube serves with CONNECT (pods/exec and friends), which
// discovery cannot tell from ordinary ones; proxy also takes a subpath.
var connectSubresources = map[string]bool{"attach": false, "exec": false, "portforward": false, "proxy": true}

// FromDiscovery rebuilds a model from a server's discovery documents, as client-go's
// ServerGroupsAndResources returns them (the core group named ""). Discovery does not say
// everything the model holds, so:
//   - list kinds are the kind plus "List", and there are no printer columns or schemas;
//   - a resource whose verbs are not sorted is taken for a custom resource, because kube lists
//     CRD verbs in a fixed unsorted order and built-in verbs sorted;
//   - attach, exec, portforward and proxy subresources become CONNECT routes for the HTTP methods of
//     their verbs (proxy with a subpath), as kube installs them;
//   - verbs the model does not know (such as proxy, or RBAC's bind) are dropped, and so are
//     subresources whose parent is not listed.
//
// Groups keep the server's order and versions start with the preferred one.
func FromDiscovery(groups []*metav1.APIGroup, lists []*metav1.APIResourceList) (*API, error) {
	byGV := map[string]*metav1.APIResourceList{}
	for _, l := range lists {
		if l != nil {
			byGV[l.GroupVersion] = l
		}
	}
	var out []Group
	for _, g := range groups {
		if g == nil {
			continue
		}
		group := Group{Name: g.Name}
		versions := slices.Clone(g.Versions)
		slices.SortStableFunc(versions, func(a, b metav1.GroupVersionForDiscovery) int {
			switch {
			case a.Version == g.PreferredVersion.Version:
				return -1
			case b.Version == g.PreferredVersion.Version:
				return 1
			}
			return 0
		})
		for _, v := range versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			list, ok := byGV[gv.String()]
			if !ok {
				continue
			}
			resources := resourcesFromDiscovery(gv, list.APIResources)
			if len(resources) > 0 {
				group.Versions = append(group.Versions, Version{Name: v.Version, Resources: resources})
			}
		}
		if len(group.Versions) > 0 {
			out = append(out, group)
		}
	}
	api, err := NewAPI(out)
	if err != nil {
		return nil, fmt.Errorf("the server's discovery does not make a valid API: %w", err)
	}
	return api, nil
}

func resourcesFromDiscovery(gv schema.GroupVersion, list []metav1.APIResource) []Resource {
	var resources []Resource
	index := map[string]int{}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		verbs := knownVerbs(r.Verbs)
		if len(verbs) == 0 {
			continue
		}
		index[r.Name] = len(resources)
		resources = append(resources, Resource{
			Plural:             r.Name,
			Singular:           r.SingularName,
			Kind:               r.Kind,
			ListKind:           r.Kind + "List",
			Namespaced:         r.Namespaced,
			Verbs:              verbs,
			ShortNames:         r.ShortNames,
			Categories:         r.Categories,
			StorageVersionHash: r.StorageVersionHash,
			Custom:             !slices.IsSorted(r.Verbs),
		})
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		i, known := index[parent]
		if !ok || !known || strings.Contains(sub, "/") {
			continue
		}
		s := Subresource{Name: sub, Group: r.Group, Version: r.Version, Kind: r.Kind}
		if r.Group == gv.Group && r.Version == gv.Version {
			// Aggregated discovery names every subresource's group version, even the parent's.
			s.Group, s.Version = "", ""
		}
		if subpath, connect := connectSubresources[sub]; connect {
			s.ConnectMethods = methodsOf(r.Verbs)
			s.ConnectSubpath = subpath
		} else {
			s.Verbs = knownVerbs(r.Verbs)
		}
		if len(s.Verbs) == 0 && len(s.ConnectMethods) == 0 {
			continue
		}
		resources[i].Subresources = append(resources[i].Subresources, s)
	}
	return resources
}

func knownVerbs(verbs []string) []string {
	var out []string
	for _, v := range verbs {
		if slices.Contains(StandardVerbs(), v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// methodsOf maps discovery verbs back to the HTTP methods of CONNECT routes, in kube's order.
func methodsOf(verbs []string) []string {
	var out []string
	for _, m := range []struct{ verb, method string }{
		{VerbGet, http.MethodGet}, {VerbCreate, http.MethodPost}, {VerbUpdate, http.MethodPut},
		{VerbPatch, http.MethodPatch}, {VerbDelete, http.MethodDelete},
	} {
		if slices.Contains(verbs, m.verb) {
			out = append(out, m.method)
		}
	}
	return out
}
