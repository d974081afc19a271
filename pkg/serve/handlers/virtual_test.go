package handlers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
)

// The create-only routes (the review APIs) decode and answer as kube's create handler does for
// storage that only creates; the expected messages and bodies are kube-apiserver v1.37.2's.
func TestCreateOnlyRoutes(t *testing.T) {
	a := start(t)
	const ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	nonResource := `{"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"}}}`

	tests := []struct {
		name, path, body string
		headers          []string
		code             int
		want             []string
	}{
		{name: "json", path: ssar + "?fieldManager=test", body: nonResource, code: 201, want: []string{
			`{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"managedFields":[{"manager":"test","operation":"Update","apiVersion":"authorization.k8s.io/v1","time":"`,
			`"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:nonResourceAttributes":{".":{},"f:path":{},"f:verb":{}}}}}]},"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"}},"status":{"allowed":true}}` + "\n"}},
		{name: "yaml in and out", path: ssar, headers: []string{"Content-Type: application/yaml", "Accept: application/yaml", "User-Agent: test"},
			body: "apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec:\n  nonResourceAttributes:\n    path: /x\n    verb: get\n",
			code: 201, want: []string{"apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nmetadata:\n  managedFields:\n", "    manager: test\n", "spec:\n  nonResourceAttributes:\n    path: /x\n    verb: get\nstatus:\n  allowed: true\n"}},
		{name: "dry run answers too", path: ssar + "?dryRun=All", body: nonResource, code: 201, want: []string{`"status":{"allowed":true}`}},
		{name: "bad dry run", path: ssar + "?dryRun=Yes", body: nonResource, code: 422, want: []string{`"message":"CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Yes\"]: supported values: \"All\""`}},
		{name: "another kind", path: ssar, body: `{"kind":"ConfigMap","apiVersion":"v1"}`, code: 400, want: []string{
			`"message":"ConfigMap in version \"v1\" cannot be handled as a SelfSubjectAccessReview: converting (v1.ConfigMap) to (authorization.SelfSubjectAccessReview): unknown conversion"`}},
		{name: "another version", path: ssar, body: `{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SelfSubjectAccessReview","spec":{}}`, code: 400, want: []string{
			`"message":"the API version in the data (authorization.k8s.io/v1beta1) does not match the expected API version (authorization.k8s.io/v1)"`}},
		{name: "bad json", path: ssar, body: `{bad`, code: 400, want: []string{
			`"message":"the object provided is unrecognized (must be of type SelfSubjectAccessReview): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({bad)"`}},
		{name: "strict", path: ssar + "?fieldValidation=Strict", body: `{"spec":{"foo":1,"nonResourceAttributes":{"path":"/x","verb":"get"}}}`, code: 400, want: []string{
			`"message":"SelfSubjectAccessReview in version \"v1\" cannot be handled as a SelfSubjectAccessReview: strict decoding error: unknown field \"spec.foo\""`}},
		{name: "invalid", path: ssar, body: `{"metadata":{"name":"x"},"spec":{}}`, code: 422, want: []string{
			`"message":".authorization.k8s.io \"\" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, metadata: Invalid value: {\"name\":\"x\"}: must be empty]"`}},
		{name: "namespace of another", path: "/apis/authorization.k8s.io/v1/namespaces/team-b/localsubjectaccessreviews",
			body: `{"metadata":{"namespace":"team-a"},"spec":{"user":"alice","resourceAttributes":{"namespace":"team-a","verb":"get","resource":"pods"}}}`, code: 400,
			want: []string{`"message":"the namespace of the provided object does not match the namespace sent on the request"`}},
		{name: "rules review is a new object", path: "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body: `{"spec":{"namespace":"x"}}`, code: 201,
			want: []string{`{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","metadata":{},"spec":{},"status":{"resourceRules":[`, `"incomplete":false}}`}},
		{name: "whoami ignores the body", path: "/apis/authentication.k8s.io/v1/selfsubjectreviews", body: `{"metadata":{"name":"x"},"status":{"userInfo":{"username":"fake"}}}`, code: 201,
			want: []string{`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":"`, `"status":{"userInfo":{"username":"system:unsecured","groups":["system:masters","system:authenticated"]}}}`}},
		{name: "no get", path: ssar + "/x", code: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.body == "" {
				method = http.MethodGet
			}
			headers := append([]string{"User-Agent: test"}, tt.headers...)
			a.do(method, tt.path, tt.body, headers...).expect(t, tt.code, tt.want...)
		})
	}

	t.Run("strict warns by default", func(t *testing.T) {
		r := a.do(http.MethodPost, ssar, `{"spec":{"foo":1,"nonResourceAttributes":{"path":"/x","verb":"get"}}}`)
		r.expect(t, 201)
		if got := r.header.Get("Warning"); got != `299 - "unknown field \"spec.foo\""` {
			t.Errorf("Warning %q", got)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		var body bytes.Buffer
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "x"}}}
		review.GetObjectKind().SetGroupVersionKind(authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview"))
		if err := protobuf.NewSerializer(kubescheme.Scheme, kubescheme.Scheme).Encode(review, &body); err != nil {
			t.Fatal(err)
		}
		r := a.do(http.MethodPost, ssar, body.String(), "Content-Type: application/vnd.kubernetes.protobuf")
		r.expect(t, 201)
		var got authorizationv1.SelfSubjectAccessReview
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || !got.Status.Allowed || got.Spec.ResourceAttributes.Resource != "pods" {
			t.Errorf("got %+v, %v: %s", got, err, r.body)
		}
	})

	t.Run("no storage", func(t *testing.T) {
		// Nothing is stored, so nothing is read: kube answers 405 to a GET of the collection.
		a.do(http.MethodGet, ssar, "").expect(t, http.StatusMethodNotAllowed, `"message":"the server does not allow this method on the requested resource"`)
	})
}
