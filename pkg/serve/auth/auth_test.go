package auth

import (
	"context"
	"crypto/x509"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/serve/request"
)

func TestParseTokens(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader("# admins\nt1,alice,1,\"dev,ops\"\nt2,bob,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tokens.Len() != 2 {
		t.Fatalf("Len = %d", tokens.Len())
	}
	bad := []struct{ in, want string }{
		{"t1,alice\n", "line 1: want token,user,uid"},
		{"t1,alice,1\nt1,bob,2\n", `line 2: the token of user "bob" is also another line's token`},
		{"t1,\"alice,1\n", "not valid CSV"},
	}
	for _, b := range bad {
		if _, err := ParseTokens(strings.NewReader(b.in)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseTokens(%q) = %v, want %q", b.in, err, b.want)
		}
	}
}

func TestUnion(t *testing.T) {
	tokens, _ := ParseTokens(strings.NewReader("good,alice,1,\"dev,ops\"\n"))
	tests := []struct {
		name      string
		anonymous Authenticator
		header    string
		wantUser  string
		wantErr   bool
		groups    string
	}{
		{name: "token", header: "Bearer good", wantUser: "alice", groups: "dev,ops,system:authenticated"},
		{name: "bearer is case-insensitive", header: "bearer good", wantUser: "alice", groups: "dev,ops,system:authenticated"},
		{name: "wrong token is an error even with anonymous on", anonymous: Anonymous, header: "Bearer bad", wantErr: true},
		{name: "no credentials, anonymous on", anonymous: Anonymous, wantUser: "system:anonymous", groups: "system:unauthenticated"},
		{name: "no credentials, anonymous off"},
		{name: "other scheme", anonymous: Anonymous, header: "Basic eA==", wantUser: "system:anonymous", groups: "system:unauthenticated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			u, ok, err := Union(tt.anonymous, &ClientCert{Roots: func() *x509.CertPool { return nil }}, tokens).AuthenticateRequest(r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantUser == "" {
				if ok {
					t.Errorf("authenticated %+v, want nobody", u)
				}
				return
			}
			if !ok || u.Name != tt.wantUser || strings.Join(u.Groups, ",") != tt.groups {
				t.Errorf("got %+v ok=%v", u, ok)
			}
		})
	}
}

func TestABAC(t *testing.T) {
	policy := `{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"dev","resource":"*","apiGroup":"*"}}
# read-only for the dev group everywhere
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"dev","readonly":true,"namespace":"*","resource":"configmaps","apiGroup":""}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"*","nonResourcePath":"/healthz*","readonly":true}}
`
	a, err := ParseABAC(strings.NewReader(policy))
	if err != nil {
		t.Fatal(err)
	}
	alice := &request.User{Name: "alice"}
	bob := &request.User{Name: "bob", Groups: []string{"dev"}}
	res := func(verb, ns, resource string) *request.RequestInfo {
		return &request.RequestInfo{IsResourceRequest: true, Verb: verb, Namespace: ns, Resource: resource}
	}
	tests := []struct {
		name string
		user *request.User
		info *request.RequestInfo
		want Decision
	}{
		{"alice in her namespace", alice, res("delete", "dev", "secrets"), Allow},
		{"alice elsewhere", alice, res("get", "prod", "secrets"), NoOpinion},
		{"dev group reads configmaps", bob, res("list", "prod", "configmaps"), Allow},
		{"dev group cannot write", bob, res("update", "prod", "configmaps"), NoOpinion},
		{"non-resource wildcard", bob, &request.RequestInfo{Verb: "get", Path: "/healthz/ping"}, Allow},
		{"non-resource outside", bob, &request.RequestInfo{Verb: "get", Path: "/metrics"}, NoOpinion},
	}
	for _, tt := range tests {
		if d, _, _ := a.Authorize(context.Background(), tt.user, tt.info); d != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, d, tt.want)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{`{"kind":"Policy"}`, "line 1: want apiVersion"},
		{`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"resource":"*"}}`, "names neither a user nor a group"},
		{`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"a","verb":"get"}}`, `unknown field "verb"`},
		{"\n\nnot json", "line 3: not a policy object"},
	} {
		if _, err := ParseABAC(strings.NewReader(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseABAC(%q) = %v, want %q", bad.in, err, bad.want)
		}
	}
}

func TestChain(t *testing.T) {
	masters := &request.User{Name: "root", Groups: []string{request.GroupMasters}}
	alice := &request.User{Name: "alice"}
	info := &request.RequestInfo{Verb: "get", Path: "/version"}
	if d, _, _ := Chain(AlwaysDeny).Authorize(context.Background(), masters, info); d != Allow {
		t.Errorf("system:masters must pass even AlwaysDeny")
	}
	if d, reason, _ := Chain(AlwaysDeny, AlwaysAllow).Authorize(context.Background(), alice, info); d != Deny || reason != "Everything is forbidden." {
		t.Errorf("the first mode with an opinion decides: %v %q", d, reason)
	}
	abac, _ := ParseABAC(strings.NewReader(""))
	if d, _, _ := Chain(abac).Authorize(context.Background(), alice, info); d != Deny {
		t.Errorf("no opinion at all must deny")
	}
	// kube's union: the reasons of the modes without an opinion, each after the mode's name, one a
	// line; a mode that decides gives its own reason alone.
	missing := AuthorizerFunc(func(context.Context, *request.User, *request.RequestInfo) (Decision, string, error) {
		return NoOpinion, `RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`, nil
	})
	d, reason, _ := Chain(&Named{Name: "abac", Authorizer: abac}, &Named{Name: "rbac", Authorizer: missing}).Authorize(context.Background(), alice, info)
	if want := "abac: No policy matched.\nrbac: RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found"; d != Deny || reason != want {
		t.Errorf("got %v %q, want %q", d, reason, want)
	}
	d, reason, _ = Chain(&Named{Name: "rbac", Authorizer: missing}, &Named{Name: "alwaysdeny", Authorizer: AlwaysDeny}).Authorize(context.Background(), alice, info)
	if d != Deny || reason != "Everything is forbidden." {
		t.Errorf("got %v %q", d, reason)
	}
}

func TestForbiddenMessage(t *testing.T) {
	u := &request.User{Name: "alice"}
	tests := []struct {
		info *request.RequestInfo
		want string
	}{
		{&request.RequestInfo{IsResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "default"},
			`User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"`},
		{&request.RequestInfo{IsResourceRequest: true, Verb: "update", APIGroup: "rbac.authorization.k8s.io", Resource: "clusterroles", Subresource: "status"},
			`User "alice" cannot update resource "clusterroles/status" in API group "rbac.authorization.k8s.io" at the cluster scope`},
		{&request.RequestInfo{Verb: "get", Path: "/metrics"}, `User "alice" cannot get path "/metrics"`},
	}
	for _, tt := range tests {
		if got := ForbiddenMessage(u, tt.info); got != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
	}
}
