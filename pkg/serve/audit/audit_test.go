package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// policyAllLevels uses every level, per-rule and policy-wide stage omission and managed-field
// omission, and each kind of rule selector.
const policyAllLevels = `apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: None
  users: ["system:kube-proxy"]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
  omitStages: ["RequestReceived"]
- level: Request
  verbs: ["delete", "deletecollection", "patch"]
- level: RequestResponse
  namespaces: ["rr"]
  resources: [{group: "", resources: ["configmaps", "pods/status"]}]
- level: RequestResponse
  userGroups: ["auditors"]
- level: Metadata
`

// logBuffer is an audit log in memory.
type logBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	closed bool
	fail   error
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return 0, l.fail
	}
	return l.b.Write(p)
}

func (l *logBuffer) Close() error { l.closed = true; return nil }

// events returns the logged events, one map each.
func (l *logBuffer) events(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

func writePolicy(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTestAuditor(t testing.TB, policy string, out io.WriteCloser) *Auditor {
	t.Helper()
	p, err := LoadPolicy(writePolicy(t, policy))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Policy: p, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	a.newID = func() string { n++; return fmt.Sprintf("id-%d", n) }
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a.now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	return a
}

// chain is the part of the server's chain that audit lives in, with u as the authenticated user.
func chain(a *Auditor, u *request.User, authz auth.Authorizer, h http.Handler) http.Handler {
	authzd := a.Authorizer(authz)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		if d, _, _ := authzd.Authorize(r.Context(), u, info); d != auth.Allow {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	audited := a.WithAudit(inner)
	return a.WithInit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := request.WithRequestInfo(r.Context(), request.NewRequestInfo(r))
		audited.ServeHTTP(w, r.WithContext(request.WithUser(ctx, u)))
	}))
}

var (
	alice    = &request.User{Name: "alice", UID: "1", Groups: []string{"dev", request.GroupAuthenticated}}
	auditor  = &request.User{Name: "carol", Groups: []string{"auditors"}}
	allowAll = auth.AuthorizerFunc(func(context.Context, *request.User, *request.RequestInfo) (auth.Decision, string, error) {
		return auth.Allow, "allowed by test", nil
	})
)

// jsonHandler answers code with body as JSON, after reading the request body.
func jsonHandler(code int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})
}

func get(ev map[string]any, path string) any {
	var v any = ev
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func compact(s string) string {
	var b bytes.Buffer
	_ = json.Compact(&b, []byte(s))
	return b.String()
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestEvents(t *testing.T) {
	const cm = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app","namespace":"rr","uid":"u1","resourceVersion":"5","managedFields":[{"manager":"kubectl"}]},"data":{"a":"1"}}`
	const deleted = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"app","kind":"configmaps","uid":"u1"}}`
	const notFound = "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"secrets \\\"s\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\"name\": \"s\", \"kind\": \"secrets\"},\n  \"code\": 404\n}\n"
	tests := []struct {
		name    string
		user    *request.User
		method  string
		target  string
		body    string
		ctype   string
		handler http.Handler
		// want: for each event, the stage and the fields to check (dotted path -> JSON).
		want []map[string]string
	}{{
		name: "create at RequestResponse: request and response objects, objectRef from the body, no managed fields",
		user: alice, method: "POST", target: "/api/v1/namespaces/rr/configmaps?fieldManager=kubectl-create",
		body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app","managedFields":[{"manager":"x"}]},"data":{"a":"1"}}`, ctype: "application/json",
		handler: jsonHandler(201, cm+"\n"),
		want: []map[string]string{
			{"stage": `"RequestReceived"`, "level": `"RequestResponse"`, "verb": `"create"`, "auditID": `"id-1"`,
				"objectRef":  `{"apiVersion":"v1","namespace":"rr","resource":"configmaps"}`,
				"user":       `{"groups":["dev","system:authenticated"],"uid":"1","username":"alice"}`,
				"requestURI": `"/api/v1/namespaces/rr/configmaps?fieldManager=kubectl-create"`, "annotations": `null`,
				"requestReceivedTimestamp": `"2026-01-02T03:04:05.001000Z"`, "stageTimestamp": `"2026-01-02T03:04:05.001000Z"`},
			{"stage": `"ResponseComplete"`, "objectRef": `{"apiVersion":"v1","name":"app","namespace":"rr","resource":"configmaps"}`,
				"responseStatus": `{"code":201,"metadata":{}}`,
				"requestObject":  `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"app"}}`,
				"responseObject": `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"name":"app","namespace":"rr","resourceVersion":"5","uid":"u1"}}`,
				"annotations":    `{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"allowed by test"}`,
				"stageTimestamp": `"2026-01-02T03:04:05.002000Z"`},
		},
	}, {
		name: "delete at Request: kube's delete options, the Status's fields with the HTTP code",
		user: alice, method: "DELETE", target: "/api/v1/namespaces/rr/configmaps/app",
		body: `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`, ctype: "application/json",
		handler: jsonHandler(200, deleted),
		want: []map[string]string{
			{"stage": `"RequestReceived"`, "level": `"Request"`},
			{"stage": `"ResponseComplete"`,
				"requestObject":  `{"apiVersion":"meta.k8s.io/__internal","kind":"DeleteOptions","propagationPolicy":"Background"}`,
				"responseStatus": `{"code":200,"details":{"kind":"configmaps","name":"app","uid":"u1"},"metadata":{},"status":"Success"}`,
				"responseObject": `null`},
		},
	}, {
		name: "delete without a body: kube logs no options, even from the query",
		user: alice, method: "DELETE", target: "/api/v1/namespaces/rr/configmaps/app?gracePeriodSeconds=0",
		handler: jsonHandler(200, deleted),
		want: []map[string]string{
			{"stage": `"RequestReceived"`},
			{"stage": `"ResponseComplete"`, "requestObject": `null`},
		},
	}, {
		name: "secrets at Metadata without RequestReceived; an indented Status fills responseStatus",
		user: alice, method: "GET", target: "/api/v1/namespaces/rr/secrets/s",
		handler: jsonHandler(404, notFound),
		want: []map[string]string{
			{"stage": `"ResponseComplete"`, "level": `"Metadata"`, "responseObject": `null`,
				"responseStatus": `{"code":404,"details":{"kind":"secrets","name":"s"},"message":"secrets \"s\" not found","metadata":{},"reason":"NotFound","status":"Failure"}`},
		},
	}, {
		name: "non-resource URL at None: nothing logged",
		user: alice, method: "GET", target: "/version", handler: jsonHandler(200, `{}`),
	}, {
		name: "user rule at None",
		user: &request.User{Name: "system:kube-proxy"}, method: "GET", target: "/api/v1/namespaces/rr/configmaps/app", handler: jsonHandler(200, cm),
	}, {
		name: "group rule: RequestResponse of a list, non-resource request has no objectRef",
		user: auditor, method: "GET", target: "/apis", handler: jsonHandler(200, `{"kind":"APIGroupList"}`),
		want: []map[string]string{
			{"stage": `"RequestReceived"`, "level": `"RequestResponse"`, "objectRef": `null`, "verb": `"get"`},
			{"stage": `"ResponseComplete"`, "responseObject": `{"kind":"APIGroupList"}`},
		},
	}, {
		name: "patch at Request: the patch as sent",
		user: alice, method: "PATCH", target: "/api/v1/namespaces/rr/configmaps/app",
		body: `{"data":{"b":"2"}}`, ctype: "application/merge-patch+json", handler: jsonHandler(200, cm),
		want: []map[string]string{
			{"stage": `"RequestReceived"`},
			{"stage": `"ResponseComplete"`, "requestObject": `{"data":{"b":"2"}}`, "responseObject": `null`, "objectRef": `{"apiVersion":"v1","name":"app","namespace":"rr","resource":"configmaps"}`},
		},
	}, {
		name: "a handler that writes nothing: kube's faked success",
		user: alice, method: "GET", target: "/api/v1/namespaces/other/configmaps/app",
		handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		want: []map[string]string{
			{"stage": `"RequestReceived"`, "level": `"Metadata"`},
			{"stage": `"ResponseComplete"`, "responseStatus": `{"code":200,"message":"Connection closed early","metadata":{},"status":"Success"}`},
		},
	}, {
		name: "watch: ResponseStarted when the response starts, no response object",
		user: alice, method: "GET", target: "/api/v1/namespaces/rr/configmaps?watch=true",
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, `{"type":"ADDED","object":{}}`)
		}),
		want: []map[string]string{
			{"stage": `"RequestReceived"`, "verb": `"watch"`},
			{"stage": `"ResponseStarted"`, "responseStatus": `{"code":200,"metadata":{}}`, "annotations": `{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"allowed by test"}`},
			{"stage": `"ResponseComplete"`, "responseObject": `null`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &logBuffer{}
			a := newTestAuditor(t, policyAllLevels, out)
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := httptest.NewRequest(tt.method, tt.target, body)
			if tt.ctype != "" {
				r.Header.Set("Content-Type", tt.ctype)
			}
			r.Header.Set("User-Agent", "test/1")
			w := httptest.NewRecorder()
			chain(a, tt.user, allowAll, tt.handler).ServeHTTP(w, r)
			if got := w.Header().Get("Audit-Id"); got != "id-1" {
				t.Errorf("Audit-Id = %q, want id-1", got)
			}
			events := out.events(t)
			if len(events) != len(tt.want) {
				t.Fatalf("got %d events, want %d:\n%s", len(events), len(tt.want), out.b.String())
			}
			for i, want := range tt.want {
				for path, v := range want {
					if got := asJSON(get(events[i], path)); got != compact(v) {
						t.Errorf("event %d %s = %s, want %s", i, path, got, v)
					}
				}
				if events[i]["kind"] != "Event" || events[i]["apiVersion"] != "audit.k8s.io/v1" {
					t.Errorf("event %d is a %v %v", i, events[i]["apiVersion"], events[i]["kind"])
				}
			}
		})
	}
}
