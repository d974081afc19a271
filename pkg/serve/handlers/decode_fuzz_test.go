package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/routes"
)

// maxFuzzBody bounds fuzzed bodies; the chain's body limit is larger, but bigger inputs find nothing
// smaller ones do not, only slower.
const maxFuzzBody = 64 << 10

// fuzzResources are the resources whose bodies the decode targets read: every kind of the built-in
// API that is stored, a custom resource and its scale subresource.
var fuzzResources = []struct {
	gvr schema.GroupVersionResource
	sub string
}{
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "events"}},
	{gvr: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}},
	{gvr: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}},
	{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}},
	{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}},
	{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, sub: "scale"},
}

// fuzzScopes builds the scopes of fuzzResources as New does, without storage (decoding never reads
// it) and without the create handlers New also insists on.
func fuzzScopes(tb testing.TB) []*scope {
	tb.Helper()
	crds, err := routes.ReadCRDFiles([]string{filepath.Join("testdata", "widgets.yaml")})
	if err != nil {
		tb.Fatal(err)
	}
	api, err := routes.Builtin().WithCRDs(crds)
	if err != nil {
		tb.Fatal(err)
	}
	reg, err := registry.New(api)
	if err != nil {
		tb.Fatal(err)
	}
	crs, err := crschema.NewSet(crds)
	if err != nil {
		tb.Fatal(err)
	}
	a := &API{cfg: Config{API: api, Registry: reg, CustomResources: crs}}
	if a.protobuf, err = newProtobufDecoder(); err != nil {
		tb.Fatal(err)
	}
	var scopes []*scope
	for _, fr := range fuzzResources {
		res, ok := api.Resource(fr.gvr.Group, fr.gvr.Version, fr.gvr.Resource)
		if !ok {
			tb.Fatalf("no resource %s in the test API", fr.gvr)
		}
		strategy, ok := reg.Strategy(fr.gvr)
		if !ok {
			tb.Fatalf("no registry rules for %s", fr.gvr)
		}
		var sub *routes.Subresource
		if fr.sub != "" {
			if sub, ok = res.Subresource(fr.sub); !ok {
				tb.Fatalf("%s has no subresource %s", fr.gvr, fr.sub)
			}
		}
		scopes = append(scopes, a.newScope(scopeSpec{res: res, sub: sub, gvr: fr.gvr, strategy: strategy}))
	}
	return scopes
}

// validations are the fieldValidation directives parseWriteOptions lets through.
var validations = []string{validationIgnore, validationWarn, validationStrict}

// protobufSeed is a ConfigMap in kube's protobuf envelope, as kubectl's typed client sends it.
func protobufSeed(tb testing.TB) []byte {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(cm, &buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecodeBody reads arbitrary create and update bodies in any media type the way the handlers do
// (readBody, then decodeObject, or decodeScale for a scale), for a resource and a fieldValidation
// directive the fuzzer picks. It must never panic; every refusal is a Status of a client error; and
// an object that decodes has the route's kind, encodes to JSON, and decodes from that JSON again,
// under Strict, to the same object.
func FuzzDecodeBody(f *testing.F) {
	scopes := fuzzScopes(f)
	const js, yaml, pb = mediaJSON, mediaYAML, mediaProtobuf
	for _, tc := range []struct {
		resource    uint8
		contentType string
		body        string
	}{
		{0, js, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"b"}},"data":{"k":"v"},"binaryData":{"b":"AAE="}}`},
		{0, js, `{"metadata":{"name":"cm"},"data":{"k":"v","k":"w"},"bogus":1}`},
		{0, yaml, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"},
		{0, yaml, "a: &x [*x]\n"},
		{0, pb, string(protobufSeed(f))},
		{0, "application/json; charset=utf-8", `{"apiVersion":"v2","kind":"ConfigMap"}`},
		{0, "text/plain", `x`},
		{1, js, `{"kind":"Secret","metadata":{"name":"s"},"type":"kubernetes.io/tls","stringData":{"tls.crt":"x"},"data":{"tls.key":"eA=="}}`},
		{2, js, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns"},"spec":{"finalizers":["kubernetes"]}}`},
		{3, js, `{"kind":"Event","metadata":{"name":"e","creationTimestamp":"2024-01-01T00:00:00Z"},"involvedObject":{"kind":"Pod"},"count":1e3,"eventTime":"2024-01-01T00:00:00.123456Z"}`},
		{5, js, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"holderIdentity":"a","leaseDurationSeconds":15,"renewTime":"2024-01-01T00:00:00.000001Z"}}`},
		{7, yaml, "kind: ClusterRole\nmetadata: {name: r}\nrules:\n- verbs: ['*']\n  apiGroups: ['']\n  resources: [pods]\naggregationRule:\n  clusterRoleSelectors: [{matchLabels: {a: b}}]\n"},
		{8, js, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"b"},"roleRef":{"kind":"Role","name":"r","apiGroup":"rbac.authorization.k8s.io"},"subjects":[{"kind":"User","name":"u"}]}`},
		{10, js, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","replicas":3,"bogus":true}}`},
		{10, yaml, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  replicas: 1.5\n"},
		{11, js, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w"},"spec":{"replicas":2}}`},
		{0, js, `[]`},
		{0, js, `null`},
		{0, js, ``},
	} {
		for v := range validations {
			f.Add(tc.resource, tc.contentType, []byte(tc.body), uint8(v))
		}
	}
	f.Fuzz(func(t *testing.T, resource uint8, contentType string, body []byte, validation uint8) {
		if len(body) > maxFuzzBody {
			return
		}
		s := scopes[int(resource)%len(scopes)]
		directive := validations[int(validation)%len(validations)]
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		data, format, err := readBody(r)
		if err != nil {
			clientError(t, err)
			return
		}
		obj, warnings, err := fuzzDecode(s, data, format, directive)
		if err != nil {
			clientError(t, err)
			return
		}
		if obj == nil {
			t.Fatal("no object and no error")
		}
		if directive == validationStrict && len(warnings) > 0 {
			t.Fatalf("warnings %q under Strict", warnings)
		}
		// A Scale keeps the apiVersion and kind its body gave, which checkTypeMeta held to the route's.
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != s.ObjectGVK && !s.IsScale() {
			t.Fatalf("decoded a %s on the route of %s", gvk, s.ObjectGVK)
		}
		encoded, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("the decoded %T does not encode: %v", obj, err)
		}
		again, warnings, err := fuzzDecode(s, encoded, formatJSON, validationStrict)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("the decoded object, encoded as %s, does not decode again: %v %q", encoded, err, warnings)
		}
		reencoded, err := json.Marshal(again)
		if err != nil || !bytes.Equal(encoded, reencoded) {
			t.Fatalf("the decoded object changes when it goes round again:\n%s\n%s (%v)", encoded, reencoded, err)
		}
	})
}

// fuzzDecode decodes a body as the route of s does.
func fuzzDecode(s *scope, data []byte, format outputFormat, directive string) (runtime.Object, []string, error) {
	if s.IsScale() {
		if format == formatProtobuf {
			return nil, nil, unsupportedMediaType(mediaJSON, mediaYAML)
		}
		scale, warnings, err := s.decodeScale(data, directive)
		if err != nil {
			return nil, nil, err
		}
		return scale, warnings, nil
	}
	return s.decodeObject(data, format, directive)
}

// clientError fails unless err is a Status of a 4xx error: a body can be wrong, the server cannot.
func clientError(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return
		}
		t.Fatalf("error %v (%T) carries no Status", err, err)
	}
	if code := status.Status().Code; code < 400 || code >= 500 {
		t.Fatalf("a bad body answers %d: %v", code, err)
	}
}
