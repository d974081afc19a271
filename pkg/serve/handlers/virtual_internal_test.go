package handlers

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/routes"
)

func TestNewCreateRoutes(t *testing.T) {
	answer := Creater(func(context.Context, CreateRequest) (runtime.Object, error) { return nil, nil })
	reviews := func() map[CreateKey]Creater {
		m := map[CreateKey]Creater{}
		for _, r := range []string{"selfsubjectreviews", "tokenreviews"} {
			m[CreateKey{Group: routes.GroupAuthentication, Version: "v1", Resource: r}] = answer
		}
		for _, r := range []string{"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"} {
			m[CreateKey{Group: routes.GroupAuthorization, Version: "v1", Resource: r}] = answer
		}
		return m
	}
	tests := []struct {
		name   string
		change func(map[CreateKey]Creater)
		err    string
		routes int
	}{
		{name: "every review", change: func(map[CreateKey]Creater) {}, routes: 6},
		{name: "a review without a handler", err: "the create-only resource authentication.k8s.io/v1, Resource=tokenreviews has no create handler",
			change: func(m map[CreateKey]Creater) {
				delete(m, CreateKey{Group: routes.GroupAuthentication, Version: "v1", Resource: "tokenreviews"})
			}},
		{name: "a nil handler", err: "is nil",
			change: func(m map[CreateKey]Creater) {
				m[CreateKey{Group: routes.GroupAuthentication, Version: "v1", Resource: "tokenreviews"}] = nil
			}},
		{name: "a resource turned off", routes: 6,
			change: func(m map[CreateKey]Creater) {
				m[CreateKey{Group: "apps", Version: "v1", Resource: "deployments"}] = answer
			}},
		{name: "a subresource that takes no creates", err: "a create handler needs a built-in resource or subresource that takes creates",
			change: func(m map[CreateKey]Creater) {
				m[CreateKey{Version: "v1", Resource: "namespaces", Subresource: "status"}] = answer
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creaters := reviews()
			tt.change(creaters)
			a := &API{cfg: Config{API: routes.Builtin(), Creaters: creaters}}
			err := a.newCreateRoutes()
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if err == nil && len(a.creates) != tt.routes {
				t.Errorf("%d create routes, want %d", len(a.creates), tt.routes)
			}
		})
	}
}
