package handlers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/routes"
)

// TestCheckRouteMedia pins go-restful's routing answers in front of kube's handlers (checked against
// kube-apiserver v1.37.2): only media types, not their parameters, are matched, exactly and with
// */* as the only wildcard; a PATCH's Content-Type is judged before its Accept.
func TestCheckRouteMedia(t *testing.T) {
	list := &routes.Route{Action: routes.ActionList, Produces: []string{routes.MediaJSON, routes.MediaYAML, routes.MediaJSONWatch}}
	patch := &routes.Route{Action: routes.ActionPatch, Produces: []string{routes.MediaJSON, routes.MediaYAML},
		Consumes: []string{routes.MediaJSONPatch, routes.MediaMergePatch, routes.MediaStrategicPatch, routes.MediaApplyPatch}}
	const listNotAcceptable = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/json;stream=watch"
	for _, tc := range []struct {
		name                string
		route               *routes.Route
		accept, contentType string
		code                int32
		message             string
	}{
		{name: "no Accept", route: list},
		{name: "JSON", route: list, accept: "application/json"},
		{name: "parameters are not go-restful's business", route: list, accept: "application/json;as=Table;v=v1;g=meta.k8s.io"},
		{name: "any", route: list, accept: "text/html, */*;q=0.1"},
		{name: "a later clause", route: list, accept: "text/html,  application/yaml"},
		{name: "a type wildcard", route: list, accept: "application/*", code: 406, message: listNotAcceptable},
		{name: "another type", route: list, accept: "application/xml", code: 406, message: listNotAcceptable},
		{name: "case counts", route: list, accept: "Application/JSON", code: 406, message: listNotAcceptable},
		{name: "a patch", route: patch, contentType: "application/merge-patch+json; charset=utf-8"},
		{name: "a patch among others", route: patch, contentType: "text/plain, application/json-patch+json"},
		{name: "a patch without Content-Type", route: patch, code: 415, message: "415: Unsupported Media Type"},
		{name: "JSON is no patch", route: patch, contentType: "application/json", accept: "text/html", code: 415, message: "415: Unsupported Media Type"},
		{name: "a patch nobody can read", route: patch, contentType: "application/json-patch+json", accept: "text/html", code: 406,
			message: "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			err := checkRouteMedia(tc.route, r)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a %d", err, tc.code)
			}
			s := se.ErrStatus
			if s.Code != tc.code || s.Message != tc.message || s.Details == nil || s.Details.Kind != "" || len(s.Details.Causes) != 0 {
				t.Errorf("status %+v, want %d %q with empty details", s, tc.code, tc.message)
			}
		})
	}
}

func BenchmarkCheckRouteMedia(b *testing.B) {
	list := &routes.Route{Action: routes.ActionList, Produces: []string{routes.MediaJSON, routes.MediaYAML, routes.MediaJSONWatch}}
	for _, accept := range []string{"application/json", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"} {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		r.Header.Set("Accept", accept)
		b.Run(accept[:16], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := checkRouteMedia(list, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
