package audit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/request"
)

// TestNilAuditor: without a policy the chain is exactly what it was.
func TestNilAuditor(t *testing.T) {
	var a *Auditor
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for name, got := range map[string]http.Handler{"WithInit": a.WithInit(h), "WithAudit": a.WithAudit(h)} {
		if reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
			t.Errorf("%s wrapped the handler", name)
		}
	}
	authn, authz := &auth.ClientCert{}, &auth.Named{Name: "x", Authorizer: allowAll}
	if a.Authenticator(authn) != authn || a.Authorizer(authz) != authz {
		t.Error("a nil Auditor wrapped the authenticator or the authorizer")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestPanicStage(t *testing.T) {
	out := &logBuffer{}
	a := newTestAuditor(t, policyAllLevels, out)
	h := chain(a, alice, allowAll, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the handler's panic re-raised", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/x/pods/p", nil))
	}()
	events := out.events(t)
	if len(events) != 2 || events[1]["stage"] != "Panic" {
		t.Fatalf("events:\n%s", out.b.String())
	}
	want := `{"code":500,"message":"APIServer panic'd: boom","metadata":{},"reason":"InternalError","status":"Failure"}`
	if got := asJSON(events[1]["responseStatus"]); got != want {
		t.Errorf("responseStatus = %s, want %s", got, want)
	}
}

// TestUnwritableLog: as kube's blocking log backend, a request whose first event cannot be stored
// is refused with kube's plain-text 500.
func TestUnwritableLog(t *testing.T) {
	out := &logBuffer{fail: errors.New("disk full")}
	a := newTestAuditor(t, policyAllLevels, out)
	called := false
	h := chain(a, alice, allowAll, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/namespaces/x/pods/p", nil))
	if called || w.Code != 500 || w.Body.String() != "Internal Server Error: \"/api/v1/namespaces/x/pods/p\": failed to store audit event\n" {
		t.Errorf("handler called %v; %d %q", called, w.Code, w.Body.String())
	}
	out.fail = nil
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/namespaces/x/pods/p", nil))
	if !called || w.Code != 200 {
		t.Errorf("after the log recovered: handler called %v, %d", called, w.Code)
	}
}

// TestImpersonatedUser: the policy sees who authenticated; the events name both users once the
// impersonation filter (inside audit) has switched.
func TestImpersonatedUser(t *testing.T) {
	out := &logBuffer{}
	a := newTestAuditor(t, policyAllLevels, out)
	bob := &request.User{Name: "bob", Groups: []string{"auditors", request.GroupAuthenticated}}
	impersonate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requestor, _ := request.UserFrom(r.Context())
			if rec, ok := request.AccessRecordFrom(r.Context()); ok {
				rec.User, rec.Impersonator = bob, requestor
			}
			next.ServeHTTP(w, r.WithContext(request.WithImpersonator(request.WithUser(r.Context(), bob), requestor)))
		})
	}
	// Put the impersonation inside WithAudit, as the server does.
	h := a.WithInit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := request.WithRequestInfo(r.Context(), request.NewRequestInfo(r))
		a.WithAudit(impersonate(jsonHandler(200, `{"kind":"Pod"}`))).ServeHTTP(w, r.WithContext(request.WithUser(ctx, alice)))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/x/pods/p", nil))
	events := out.events(t)
	if len(events) != 2 {
		t.Fatalf("events:\n%s", out.b.String())
	}
	// alice is not in auditors: the catch-all Metadata rule applies, not bob's RequestResponse.
	if events[1]["level"] != "Metadata" || get(events[1], "user.username") != "alice" || get(events[1], "impersonatedUser.username") != "bob" {
		t.Errorf("event: %s", asJSON(events[1]))
	}
	if events[0]["impersonatedUser"] != nil {
		t.Errorf("RequestReceived names the impersonated user before impersonation: %s", asJSON(events[0]))
	}
}

// TestAnnotationsAndFailedAuthentication: kube's decision annotations on a denial, and the single
// ResponseStarted event of a request that failed authentication.
func TestAnnotationsAndFailedAuthentication(t *testing.T) {
	out := &logBuffer{}
	a := newTestAuditor(t, policyAllLevels, out)
	deny := auth.AuthorizerFunc(func(_ context.Context, _ *request.User, _ *request.RequestInfo) (auth.Decision, string, error) {
		return auth.NoOpinion, "no rule matched", nil
	})
	broken := auth.AuthorizerFunc(func(_ context.Context, _ *request.User, _ *request.RequestInfo) (auth.Decision, string, error) {
		return auth.NoOpinion, "", errors.New("webhook down")
	})
	r := func() *http.Request { return httptest.NewRequest("GET", "/api/v1/namespaces/x/pods/p", nil) }
	chain(a, alice, deny, jsonHandler(200, "{}")).ServeHTTP(httptest.NewRecorder(), r())
	chain(a, alice, broken, jsonHandler(200, "{}")).ServeHTTP(httptest.NewRecorder(), r())

	failing := a.Authenticator(auth.AuthenticatorFunc(func(*http.Request) (*request.User, bool, error) { return nil, false, nil }))
	req := r()
	req.Header.Set("Authorization", "Bearer nope")
	a.WithInit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(request.WithRequestInfo(r.Context(), request.NewRequestInfo(r)))
		if _, ok, _ := failing.AuthenticateRequest(r); ok {
			t.Error("authenticated")
		}
	})).ServeHTTP(httptest.NewRecorder(), req)

	events := out.events(t)
	if len(events) != 5 {
		t.Fatalf("events:\n%s", out.b.String())
	}
	for i, want := range map[int]string{
		1: `{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":"no rule matched"}`,
		3: `{"authorization.k8s.io/reason":"internal error"}`,
	} {
		if got := asJSON(events[i]["annotations"]); got != want {
			t.Errorf("event %d annotations = %s, want %s", i, got, want)
		}
	}
	failed := events[4]
	if failed["stage"] != "ResponseStarted" || asJSON(failed["user"]) != "{}" ||
		asJSON(failed["responseStatus"]) != `{"code":401,"message":"Unauthorized","metadata":{},"reason":"Unauthorized","status":"Failure"}` ||
		failed["responseObject"] != nil { // Metadata level: the Status is not logged as an object
		t.Errorf("failed authentication event: %s", asJSON(failed))
	}
}

// TestProtobufCreate: kubectl's typed clients send protobuf; kube logs the object as JSON.
func TestProtobufCreate(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	var body bytes.Buffer
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "cm1"}, Data: map[string]string{"a": "1"}}
	if err := protobuf.NewSerializer(scheme, scheme).Encode(cm, &body); err != nil {
		t.Fatal(err)
	}
	p, err := newProtobufToJSON()
	if err != nil {
		t.Fatal(err)
	}
	obj, meta, err := p.requestObject("create", mediaProtobuf, body.Bytes())
	// The JSON kube-apiserver v1.37.2 logged for `kubectl create configmap cm1 --from-literal=a=1`.
	if want := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1"},"data":{"a":"1"}}`; err != nil || string(obj) != want || meta.Name != "cm1" {
		t.Errorf("got %s, %+v, %v; want %s", obj, meta, err, want)
	}
}

func TestStripManagedFields(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"uid":"u"},"data":{"managedFields":"kept"}}`,
			`{"metadata":{"name":"a","uid":"u"},"data":{"managedFields":"kept"}}`},
		{`{"kind":"List","metadata":{},"items":[{"metadata":{"managedFields":[],"name":"x"}},{"metadata":{"name":"y","managedFields":null}}]}`,
			`{"kind":"List","metadata":{},"items":[{"metadata":{"name":"x"}},{"metadata":{"name":"y"}}]}`},
		{`{"kind":"Table","rows":[{"cells":["a",1.50,true,null],"object":{"metadata":{"managedFields":[{"a":"<&>"}],"name":"a"}}}]}`,
			`{"kind":"Table","rows":[{"cells":["a",1.50,true,null],"object":{"metadata":{"name":"a"}}}]}`},
		{`{"no":"managed fields here"}`, `{"no":"managed fields here"}`},
	}
	for _, tt := range tests {
		got, err := stripManagedFields([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("stripManagedFields(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := stripManagedFields([]byte(`{"metadata":{"managedFields":[}`)); err == nil {
		t.Error("broken JSON: no error")
	}
}

func TestLooksLikeStatus(t *testing.T) {
	for in, want := range map[string]bool{
		`{"kind":"Status","apiVersion":"v1"}`: true,
		"{\n  \"kind\": \"Status\",":          true,
		`{"kind":"StatusList"}`:               false,
		`{"kind":"ConfigMap"}`:                false,
		`{"apiVersion":"v1","kind":"Status"}`: false, // apictl and kube write kind first
		`not json`:                            false,
	} {
		if got := looksLikeStatus([]byte(in)); got != want {
			t.Errorf("looksLikeStatus(%q) = %v", in, got)
		}
	}
}

// A body beyond the limit is left out of the event rather than logged in part.
func TestBodyLimit(t *testing.T) {
	b := &bodyRecorder{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", 100))), limit: 10}
	if _, err := io.ReadAll(b); err != nil {
		t.Fatal(err)
	}
	if b.recorded() != nil {
		t.Errorf("recorded %q past the limit", b.recorded())
	}
}
