package request

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// resourceVerbs are the verbs a resource request can have ("" for a method kube has no verb for).
var resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", ""}

// FuzzNewRequestInfo resolves arbitrary methods, paths and queries. It must never panic, and the
// result must describe the path it came from: a non-resource request carries only the path and the
// lower-cased method; a resource request's prefix, group, version, namespace and parts are segments
// of the path in order, its verb is one of kube's, and a name taken from a field selector is a
// valid path segment.
func FuzzNewRequestInfo(f *testing.F) {
	for _, tc := range []struct{ method, path, query string }{
		{"GET", "/healthz", ""},
		{"GET", "/apis/apps/v1", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps", "watch=true&resourceVersion=10"},
		{"GET", "/api/v1/namespaces/ns/configmaps", "fieldSelector=metadata.name%3Dcm1"},
		{"GET", "/api/v1/namespaces/ns/configmaps", "fieldSelector=metadata.name%3D..&watch=0"},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/cm1", ""},
		{"DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "labelSelector=a%3Db"},
		{"PUT", "/api/v1/namespaces/ns/finalize", ""},
		{"PATCH", "/api/v1/namespaces/ns/status", "fieldManager=x"},
		{"POST", "/apis/example.com/v1/namespaces/ns/widgets/w/scale", "dryRun=All"},
		{"CONNECT", "/api/v1/namespaces/ns/pods/p/exec", "command=ls"},
		{"GET", "/api/v1/watch", ""},
		{"GET", "/api//v1//", "%zz"},
		{"HEAD", "///api/v1/namespaces", ";;;"},
	} {
		f.Add(tc.method, tc.path, tc.query)
	}
	f.Fuzz(func(t *testing.T, method, p, query string) {
		if len(p)+len(query) > 64<<10 || len(method) > 64 {
			return
		}
		r := &http.Request{Method: method, URL: &url.URL{Path: p, RawQuery: query}}
		info := NewRequestInfo(r)
		if info.Path != p {
			t.Fatalf("Path %q, want %q", info.Path, p)
		}
		if !info.IsResourceRequest {
			want := RequestInfo{Path: p, Verb: strings.ToLower(method)}
			if info.Verb != want.Verb || info.APIPrefix != "" || info.APIGroup != "" || info.APIVersion != "" ||
				info.Namespace != "" || info.Resource != "" || info.Subresource != "" || info.Name != "" || info.Parts != nil {
				t.Fatalf("a non-resource request resolved to %+v", info)
			}
			return
		}
		if !slices.Contains(resourceVerbs, info.Verb) {
			t.Fatalf("verb %q is not one of kube's: %+v", info.Verb, info)
		}
		segs := splitPath(p)
		want := []string{info.APIPrefix}
		if info.APIPrefix == "apis" {
			want = append(want, info.APIGroup)
		} else if info.APIPrefix != "api" || info.APIGroup != "" {
			t.Fatalf("prefix %q with group %q: %+v", info.APIPrefix, info.APIGroup, info)
		}
		want = append(want, info.APIVersion)
		if !slices.Equal(segs[:len(want)], want) {
			t.Fatalf("path segments %q do not start with %q: %+v", segs, want, info)
		}
		if len(info.Parts) == 0 || !slices.Equal(segs[len(segs)-len(info.Parts):], info.Parts) {
			t.Fatalf("parts %q are not the end of the path's segments %q", info.Parts, segs)
		}
		if info.Resource != info.Parts[0] {
			t.Fatalf("resource %q is not the first part of %q", info.Resource, info.Parts)
		}
		if info.Namespace != "" && !slices.Contains(segs, info.Namespace) {
			t.Fatalf("namespace %q is not a segment of %q", info.Namespace, p)
		}
		switch {
		// An empty name part (api////0) leaves the request a list or watch, which a field selector
		// may name, as kube's parser does.
		case len(info.Parts) >= 2 && info.Name != info.Parts[1] && !(info.Parts[1] == "" && (info.Verb == "list" || info.Verb == "watch")):
			t.Fatalf("name %q is not the second part of %q", info.Name, info.Parts)
		case len(info.Parts) < 2 && info.Name != "":
			// Only a field selector names the object of a list or watch.
			if info.Verb != "list" && info.Verb != "watch" || len(content.IsPathSegmentName(info.Name)) > 0 {
				t.Fatalf("name %q of a %s without a name in the path", info.Name, info.Verb)
			}
		}
		if info.Name == "" && (info.Verb == "get" || info.Verb == "delete") {
			t.Fatalf("a %s without a name", info.Verb)
		}
		if info.Subresource != "" && (len(info.Parts) < 3 || info.Subresource != info.Parts[2]) {
			t.Fatalf("subresource %q is not the third part of %q", info.Subresource, info.Parts)
		}
		// A GET of a collection is a watch when ?watch= says so in kube's reading of booleans
		// (runtime.Convert_Slice_string_To_bool): anything but 0 and false, in any case, an empty
		// value included.
		watchPath := segs[len(want)] == "watch"
		if v := r.URL.Query()["watch"]; !watchPath && len(info.Parts) < 2 && (method == http.MethodGet || method == http.MethodHead) &&
			len(v) > 0 {
			kubeWatch := v[0] != "0" && !strings.EqualFold(v[0], "false")
			if (info.Verb == "watch") != kubeWatch {
				t.Fatalf("?watch=%s gives the verb %s", v[0], info.Verb)
			}
		}
	})
}
