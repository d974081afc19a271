package admission

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

func TestKubeAuthorizer(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", UID: "u1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}}
	// onlyGets allows get, denies delete and has no opinion on the rest, recording what it saw.
	var seenUser *request.User
	var seenInfo *request.RequestInfo
	onlyGets := auth.AuthorizerFunc(func(_ context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
		seenUser, seenInfo = u, info
		switch info.Verb {
		case "get":
			return auth.Allow, "gets are fine", nil
		case "delete":
			return auth.Deny, "no deletes", nil
		}
		return auth.NoOpinion, "not mine", nil
	})
	tests := []struct {
		name         string
		authz        auth.Authorizer
		attrs        authorizer.AttributesRecord
		wantDecision authorizer.Decision
		wantReason   string
		wantInfo     *request.RequestInfo
	}{{
		name:  "allow",
		authz: onlyGets,
		attrs: authorizer.AttributesRecord{User: alice, Verb: "get", APIGroup: "apps", APIVersion: "*", Resource: "deployments",
			Subresource: "scale", Namespace: "ns", Name: "d", ResourceRequest: true},
		wantDecision: authorizer.DecisionAllow, wantReason: "gets are fine",
		wantInfo: &request.RequestInfo{IsResourceRequest: true, Verb: "get", APIGroup: "apps", APIVersion: "*",
			Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "d"},
	}, {
		name:         "deny",
		authz:        onlyGets,
		attrs:        authorizer.AttributesRecord{User: alice, Verb: "delete", Resource: "pods", APIVersion: "*", ResourceRequest: true},
		wantDecision: authorizer.DecisionDeny, wantReason: "no deletes",
		wantInfo: &request.RequestInfo{IsResourceRequest: true, Verb: "delete", APIVersion: "*", Resource: "pods"},
	}, {
		name:         "non-resource, no opinion",
		authz:        onlyGets,
		attrs:        authorizer.AttributesRecord{User: alice, Verb: "post", Path: "/healthz"},
		wantDecision: authorizer.DecisionNoOpinion, wantReason: "not mine",
		wantInfo: &request.RequestInfo{Verb: "post", Path: "/healthz"},
	}, {
		// The chain answers a review with NoOpinion where a request would be denied: the CEL
		// library's denied() is false then, as in kube.
		name:         "chain without opinion",
		authz:        auth.Chain(&auth.Named{Name: "rbac", Authorizer: onlyGets}),
		attrs:        authorizer.AttributesRecord{User: alice, Verb: "list", Resource: "pods", APIVersion: "*", ResourceRequest: true},
		wantDecision: authorizer.DecisionNoOpinion, wantReason: "rbac: not mine",
		wantInfo: &request.RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "*", Resource: "pods"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seenUser, seenInfo = nil, nil
			d, reason, err := KubeAuthorizer(tt.authz).Authorize(context.Background(), tt.attrs)
			if err != nil || d != tt.wantDecision || reason != tt.wantReason {
				t.Errorf("got %v %q %v, want %v %q", d, reason, err, tt.wantDecision, tt.wantReason)
			}
			wantUser := &request.User{Name: "alice", UID: "u1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}}
			if !reflect.DeepEqual(seenUser, wantUser) {
				t.Errorf("user: got %+v, want %+v", seenUser, wantUser)
			}
			if !reflect.DeepEqual(seenInfo, tt.wantInfo) {
				t.Errorf("request: got %+v, want %+v", seenInfo, tt.wantInfo)
			}
		})
	}
	if d, _, _ := KubeAuthorizer(nil).Authorize(context.Background(), authorizer.AttributesRecord{}); d != authorizer.DecisionNoOpinion {
		t.Errorf("a nil authorizer: got %v, want no opinion", d)
	}
}
