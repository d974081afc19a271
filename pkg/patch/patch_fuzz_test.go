package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// fuzzObject is a stored object the patch targets patch.
type fuzzObject struct {
	target Target
	doc    string
}

// fuzzObjects are a ConfigMap (maps only), a ServiceAccount (lists with merge keys, for strategic
// merge) and a Widget (a custom resource with a keyed list), each with managedFields of two managers.
var fuzzObjects = []fuzzObject{
	{configMaps, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  uid: 0b6f2a44-1d0e-4c1e-9d7e-6b8a2f0d9e11
  creationTimestamp: "2024-01-01T00:00:00Z"
  labels: {app: web}
  managedFields:
  - {manager: kubectl-create, operation: Update, apiVersion: v1, time: "2024-01-01T00:00:00Z", fieldsType: FieldsV1,
     fieldsV1: {"f:data": {".": {}, "f:mode": {}}}}
  - {manager: tool, operation: Apply, apiVersion: v1, time: "2024-01-01T00:00:00Z", fieldsType: FieldsV1,
     fieldsV1: {"f:data": {"f:level": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}}
data: {mode: fast, level: "1"}
binaryData: {blob: AAE=}
`},
	{Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}}, `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: settings
  namespace: default
  uid: 0b6f2a44-1d0e-4c1e-9d7e-6b8a2f0d9e12
  creationTimestamp: "2024-01-01T00:00:00Z"
  finalizers: [a/b]
secrets: [{name: s1}, {name: s2, namespace: default}]
imagePullSecrets: [{name: pull}]
automountServiceAccountToken: false
`},
	{widgets, `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: settings
  namespace: default
  uid: 0b6f2a44-1d0e-4c1e-9d7e-6b8a2f0d9e13
  creationTimestamp: "2024-01-01T00:00:00Z"
  managedFields:
  - {manager: tool, operation: Apply, apiVersion: example.com/v1, time: "2024-01-01T00:00:00Z", fieldsType: FieldsV1,
     fieldsV1: {"f:spec": {"f:size": {}, "f:parts": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:count": {}}}}}}
spec:
  replicas: 2
  size: small
  parts: [{name: a, count: 1}, {name: b}]
  tags: ["x", "y"]
  labels: {k: v}
status: {replicas: 1}
`},
}

// fuzzValidations are the fieldValidation values a PATCH may carry.
var fuzzValidations = []string{"", "Ignore", "Warn", "Strict"}

// fuzzPatch applies an arbitrary patch of type typ to the stored object the fuzzer picks. Nothing
// may panic or hang (the fuzzer reports an input that runs for more than 10 s); every error is a
// Status of a client error; the stored object is not modified; a patched object encodes to JSON and
// keeps the URL's name and namespace.
func fuzzPatch(f *testing.F, typ types.PatchType, seeds []string) {
	p := testPatcher(f)
	var stored []runtime.Object
	for _, o := range fuzzObjects {
		stored = append(stored, decode(f, p, o.target, o.doc))
	}
	for _, s := range seeds {
		for i := range fuzzObjects {
			f.Add(uint8(i), []byte(s), uint8(i), i == 0)
		}
	}
	f.Fuzz(func(t *testing.T, object uint8, patch []byte, validation uint8, force bool) {
		if len(patch) > 64<<10 {
			return
		}
		i := int(object) % len(fuzzObjects)
		current := stored[i]
		before, err := json.Marshal(current)
		if err != nil {
			t.Fatal(err)
		}
		req := Request{Target: fuzzObjects[i].target, Type: typ, Namespace: "default", Name: "settings", Patch: patch,
			Options:   metav1.PatchOptions{FieldManager: "fuzzer", FieldValidation: fuzzValidations[int(validation)%len(fuzzValidations)]},
			UserAgent: "fuzz/v0"}
		if typ == types.ApplyYAMLPatchType {
			req.Options.Force = &force
		}
		res, err := p.Patch(current, req)
		if after, _ := json.Marshal(current); !bytes.Equal(before, after) {
			t.Fatalf("the patch changed the stored object:\n%s\n%s", before, after)
		}
		if err != nil {
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Fatalf("error %v (%T) carries no Status", err, err)
			}
			// kube answers a strategic merge patch that its library refuses for a reason it does not
			// classify (an unknown directive, a list patched into a field the type lacks) with a 500
			// without a reason, the library's error as the message; every other refusal is a client error.
			kubePassThrough := typ == types.StrategicMergePatchType && status.Status().Code == http.StatusInternalServerError &&
				status.Status().Reason == metav1.StatusReasonUnknown
			if code := status.Status().Code; (code < 400 || code >= 500) && !kubePassThrough {
				t.Fatalf("a patch answers %d: %v", code, err)
			}
			if code := status.Status().Code; code == http.StatusUnsupportedMediaType && !(typ == types.StrategicMergePatchType && i == 2) {
				t.Fatalf("%s answers 415 for %s", typ, fuzzObjects[i].target)
			}
			return
		}
		if _, err := json.Marshal(res.Object); err != nil {
			t.Fatalf("the patched object does not encode: %v", err)
		}
		m, err := meta.Accessor(res.Object)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetName() != "settings" || m.GetNamespace() != "default" {
			t.Fatalf("the patched object is %s/%s", m.GetNamespace(), m.GetName())
		}
	})
}

// FuzzJSONPatch applies arbitrary RFC 6902 patches.
func FuzzJSONPatch(f *testing.F) {
	fuzzPatch(f, types.JSONPatchType, []string{
		`[{"op":"test","path":"/metadata/name","value":"settings"},{"op":"add","path":"/metadata/labels/x","value":"y"}]`,
		`[{"op":"replace","path":"/data/mode","value":"slow"},{"op":"copy","from":"/data/mode","path":"/data/copy"},{"op":"move","from":"/data/level","path":"/data/tier"},{"op":"remove","path":"/data/copy"}]`,
		`[{"op":"add","path":"/spec/parts/-","value":{"name":"c","count":3}},{"op":"remove","path":"/spec/tags/0"}]`,
		`[{"op":"add","path":"/secrets/1","value":{"name":"s3"}},{"op":"replace","path":"/automountServiceAccountToken","value":"yes"}]`,
		`[{"op":"copy","from":"/metadata","path":"/metadata/annotations"}]`,
		`[{"op":"replace","path":"/metadata/name","value":"other"}]`,
		`[{"op":"add","path":"/a~1b~0c","value":1},{"op":"remove","path":"/nope"}]`,
		`[{"op":"bogus"}]`,
		`{}`,
		`[`,
	})
}

// FuzzMergePatch applies arbitrary RFC 7386 merge patches.
func FuzzMergePatch(f *testing.F) {
	fuzzPatch(f, types.MergePatchType, []string{
		`{"data":{"mode":"slow","level":null},"metadata":{"labels":{"x":"y"}}}`,
		`{"spec":{"parts":[{"name":"z"}],"size":null,"bogus":1}}`,
		`{"secrets":null,"automountServiceAccountToken":true}`,
		`{"metadata":{"name":"other","namespace":"x","uid":"u"}}`,
		`{"metadata":{"managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:x":{}}}]}}`,
		`{"kind":"Secret","apiVersion":"v2"}`,
		`{"data":{"a":1,"a":2}}`,
		`[]`,
		`null`,
	})
}

// FuzzStrategicMergePatch applies arbitrary strategic merge patches, directives included; custom
// resources refuse them with 415, as in kube.
func FuzzStrategicMergePatch(f *testing.F) {
	fuzzPatch(f, types.StrategicMergePatchType, []string{
		`{"data":{"mode":"slow"},"metadata":{"labels":{"x":"y","app":null}}}`,
		`{"secrets":[{"name":"s3"},{"name":"s1","$patch":"delete"}],"$setElementOrder/secrets":[{"name":"s3"},{"name":"s2"}]}`,
		`{"imagePullSecrets":[{"$patch":"replace"}],"metadata":{"$deleteFromPrimitiveList/finalizers":["a/b"]}}`,
		`{"$retainKeys":["data"],"data":{"$patch":"replace","k":"v"}}`,
		`{"metadata":{"finalizers":["c/d"],"$setElementOrder/finalizers":["c/d","a/b"]}}`,
		`{"$patch":"delete"}`,
		`{"secrets":"nope"}`,
		`{"spec":{"parts":[{"name":"c"}]}}`,
	})
}

// FuzzApplyPatch applies arbitrary server-side apply configurations (YAML or JSON), with and
// without force, so that conflicts come up too.
func FuzzApplyPatch(f *testing.F) {
	fuzzPatch(f, types.ApplyYAMLPatchType, []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  mode: slow\n",
		"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: settings\nsecrets:\n- name: s3\n",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: settings\nspec:\n  size: large\n  parts:\n  - name: a\n    count: 5\n",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"settings"},"spec":{"parts":[{"name":"a"},{"name":"a"}]}}`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, managedFields: [{manager: x}]}\n",
		"a: &a [*a, *a]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"kind: ConfigMap\n",
		"- 1\n",
		"",
	})
}
