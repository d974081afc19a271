package filters

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// grants is an authorizer that allows alice exactly the listed "verb group resource[/sub] name"
// requests ("*" for any name), and system:masters everything.
func grants(allowed ...string) auth.Authorizer {
	return auth.Chain(auth.AuthorizerFunc(func(_ context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error) {
		resource := info.Resource
		if info.Subresource != "" {
			resource += "/" + info.Subresource
		}
		for _, name := range []string{info.Name, "*"} {
			if slices.Contains(allowed, strings.Join([]string{info.Verb, info.APIGroup, resource, name}, " ")) {
				return auth.Allow, "", nil
			}
		}
		return auth.NoOpinion, "", nil
	}))
}

// The messages are kube-apiserver v1.37.2's (constrained impersonation on, its default), for alice in
// dev listing configmaps in default, with the RBAC grants of each case.
func TestImpersonation(t *testing.T) {
	const (
		listOn = "impersonate-on:user-info:list  configmaps *"
		users  = "impersonate:user-info authentication.k8s.io users *"
	)
	tests := []struct {
		name    string
		path    string // default /api/v1/namespaces/default/configmaps
		headers map[string][]string
		grants  []string
		code    int
		message string
		// user is what the handler sees: name, uid, groups and extra as JSON.
		user string
	}{
		{name: "no permission at all", headers: map[string][]string{"Impersonate-User": {"bob"}}, code: 403,
			message: `configmaps is forbidden: User "alice" cannot impersonate-on:user-info:list resource "configmaps" in API group "" in the namespace "default"`},
		{name: "a service account", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:sa1"}}, code: 403,
			message: `configmaps is forbidden: User "alice" cannot impersonate-on:serviceaccount:list resource "configmaps" in API group "" in the namespace "default"`},
		{name: "a service account with groups is legacy only", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:sa1"}, "Impersonate-Group": {"g"}},
			code: 403, message: `serviceaccounts "sa1" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"`},
		{name: "allowed on the request, not the user", headers: map[string][]string{"Impersonate-User": {"bob"}}, grants: []string{listOn}, code: 403,
			message: `users.authentication.k8s.io "bob" is forbidden: User "alice" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "constrained", headers: map[string][]string{"Impersonate-User": {"bob"}}, grants: []string{listOn, users}, code: 200,
			user: `{"Name":"bob","UID":"","Groups":["system:authenticated"],"Extra":null}`},
		{name: "a group", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"g1"}}, grants: []string{listOn, users}, code: 403,
			message: `groups.authentication.k8s.io "g1" is forbidden: User "alice" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "system:masters", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}}, grants: []string{listOn, users}, code: 403,
			message: `groups.authentication.k8s.io "system:masters" is forbidden: User "alice" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`},
		{name: "an extra key without a domain", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Extra-Foo": {"x"}}, grants: []string{listOn, users}, code: 403,
			message: `userextras.authentication.k8s.io is forbidden: User "alice" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")`},
		{name: "an extra", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Extra-Example.com%2ffoo": {"x"}}, grants: []string{listOn, users}, code: 403,
			message: `userextras.authentication.k8s.io "x" is forbidden: User "alice" cannot impersonate:user-info resource "userextras/example.com/foo" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "a uid", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"123"}}, grants: []string{listOn, users}, code: 403,
			message: `uids.authentication.k8s.io "123" is forbidden: User "alice" cannot impersonate:user-info resource "uids" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "everything constrained", code: 200,
			headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"123"}, "Impersonate-Group": {"g1", "g2"}, "Impersonate-Extra-Example.com%2ffoo": {"x", "y"}},
			grants: []string{listOn, users, "impersonate:user-info authentication.k8s.io uids *", "impersonate:user-info authentication.k8s.io groups *",
				"impersonate:user-info authentication.k8s.io userextras/example.com/foo *"},
			user: `{"Name":"bob","UID":"123","Groups":["g1","g2","system:authenticated"],"Extra":{"example.com/foo":["x","y"]}}`},
		{name: "legacy", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}},
			grants: []string{"impersonate  users bob", "impersonate  groups system:masters"}, code: 200,
			user: `{"Name":"bob","UID":"","Groups":["system:masters","system:authenticated"],"Extra":null}`},
		{name: "legacy service account", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:sa1"}},
			grants: []string{"impersonate  serviceaccounts sa1"}, code: 200,
			user: `{"Name":"system:serviceaccount:ns1:sa1","UID":"","Groups":["system:serviceaccounts","system:serviceaccounts:ns1","system:authenticated"],"Extra":null}`},
		{name: "anonymous", headers: map[string][]string{"Impersonate-User": {"system:anonymous"}},
			grants: []string{"impersonate  users system:anonymous"}, code: 200,
			user: `{"Name":"system:anonymous","UID":"","Groups":["system:unauthenticated"],"Extra":null}`},
		{name: "a node", headers: map[string][]string{"Impersonate-User": {"system:node:n1"}},
			grants: []string{"impersonate-on:arbitrary-node:list  configmaps *", "impersonate:arbitrary-node authentication.k8s.io nodes n1"}, code: 200,
			user: `{"Name":"system:node:n1","UID":"","Groups":["system:nodes","system:authenticated"],"Extra":null}`},
		{name: "a group without a user", headers: map[string][]string{"Impersonate-Group": {"g"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g"}, Extra:map[string][]string(nil)} without impersonating a user name`},
		{name: "an extra without a user", headers: map[string][]string{"Impersonate-Extra-Foo%2fbar": {"v"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string(nil), Extra:map[string][]string{"foo/bar":[]string{"v"}}} without impersonating a user name`},
		{name: "a uid without a user", headers: map[string][]string{"Impersonate-Uid": {"u"}}, code: 400,
			message: `requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string(nil), Extra:map[string][]string(nil)} without impersonating a user name`},
		{name: "a non-resource request", path: "/version", headers: map[string][]string{"Impersonate-User": {"bob"}}, code: 403,
			message: `forbidden: User "alice" cannot impersonate-on:user-info:get path "/version"`},
		{name: "no headers", code: 200, user: `{"Name":"alice","UID":"","Groups":["dev"],"Extra":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen *request.User
			var impersonator *request.User
			h := WithImpersonation(grants(tt.grants...), slog.New(slog.NewTextHandler(io.Discard, nil)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen, _ = request.UserFrom(r.Context())
				impersonator, _ = request.ImpersonatorFrom(r.Context())
				for k := range r.Header {
					if strings.HasPrefix(k, "Impersonate-") {
						t.Errorf("header %s reached the handler", k)
					}
				}
			}))
			path := tt.path
			if path == "" {
				path = "/api/v1/namespaces/default/configmaps"
			}
			r := httptest.NewRequest(http.MethodGet, path, nil)
			for k, v := range tt.headers {
				r.Header[k] = v
			}
			ctx := request.WithUser(r.Context(), &request.User{Name: "alice", Groups: []string{"dev"}})
			r = r.WithContext(request.WithRequestInfo(ctx, request.NewRequestInfo(r)))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.code {
				t.Fatalf("code %d, want %d: %s", w.Code, tt.code, w.Body)
			}
			if tt.message != "" {
				var st struct{ Message string }
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Message != tt.message {
					t.Errorf("message\n got %s\nwant %s", st.Message, tt.message)
				}
				return
			}
			got, _ := json.Marshal(seen)
			if string(got) != tt.user {
				t.Errorf("user %s, want %s", got, tt.user)
			}
			if len(tt.headers) > 0 && (impersonator == nil || impersonator.Name != "alice") {
				t.Errorf("impersonator %+v, want alice", impersonator)
			}
		})
	}
}

// BenchmarkImpersonationNoHeaders is the cost every request pays: it must not allocate.
func BenchmarkImpersonationNoHeaders(b *testing.B) {
	h := WithImpersonation(grants(), slog.New(slog.NewTextHandler(io.Discard, nil)))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
	r.Header.Set("Accept", "application/json")
	r.Header.Set("User-Agent", "kubectl/v1.37.2")
	r.Header.Set("Authorization", "Bearer x")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
	if allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); allocs != 0 {
		b.Errorf("%v allocations per request without impersonation headers", allocs)
	}
}

// The access log names the user a request ran as and, when impersonating, the user who authenticated,
// though both are known only inside the filters it wraps.
func TestAccessLogNamesTheImpersonator(t *testing.T) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	alice := auth.AuthenticatorFunc(func(*http.Request) (*request.User, bool, error) {
		return &request.User{Name: "alice", Groups: []string{"system:masters"}}, true, nil
	})
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h = WithImpersonation(auth.Chain(), log)(h)
	h = WithAuthentication(alice, log)(h)
	h = WithMetrics(m, log)(h)
	h = WithRequestInfo(h)

	for _, tt := range []struct {
		headers map[string]string
		want    string
	}{
		{nil, `user=alice srcIP`},
		{map[string]string{"Impersonate-User": "bob"}, `user=bob srcIP=192.0.2.1:1234 resp=200 bytes=0 impersonatedBy=alice`},
	} {
		logs.Reset()
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
		for k, v := range tt.headers {
			r.Header.Set(k, v)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !strings.Contains(logs.String(), tt.want) {
			t.Errorf("access log %q lacks %q", logs.String(), tt.want)
		}
	}
}
