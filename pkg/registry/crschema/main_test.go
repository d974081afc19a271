package crschema

import (
	"encoding/json"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
)

// testCRDs are the CRDs of testdata/crds.yaml.
func testCRDs(t testing.TB) []routes.CRD {
	t.Helper()
	crds, err := routes.ReadCRDFiles([]string{filepath.Join("testdata", "crds.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	return crds
}

// validator returns the compiled validator of example.com/<version> <resource>.
func validator(t testing.TB, version, resource string) *Validator {
	t.Helper()
	set, err := NewSet(testCRDs(t))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := set.Validator(schema.GroupVersionResource{Group: "example.com", Version: version, Resource: resource})
	if !ok {
		t.Fatalf("no validator for example.com/%s %s", version, resource)
	}
	return v
}

func widgets(t testing.TB) *Validator { return validator(t, "v1", "widgets") }

// object decodes JSON as the server does (integers as int64).
func object(t testing.TB, js string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts([]byte(js), &m); err != nil {
		t.Fatalf("test object %s: %v", js, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// widget is a valid-looking Widget named w in namespace default with the given spec.
func widget(t testing.TB, spec string) *unstructured.Unstructured {
	t.Helper()
	return object(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":`+spec+`}`)
}

// jsonOf prints a value with sorted keys, for comparisons.
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	if u, ok := v.(*unstructured.Unstructured); ok {
		v = u.Object
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkError fails the test unless err's message is want ("" for no error) and, for an error, its
// status code is code (0 for a plain error, which handlers serve as a 500). It reports whether err was
// nil, so that the caller goes on to check the result.
func checkError(t *testing.T, err error, want string, code int32) bool {
	t.Helper()
	if got := errString(err); got != want {
		t.Fatalf("error %s\nwant  %s", got, want)
	}
	if err == nil {
		return true
	}
	var got int32
	if s, ok := err.(apierrors.APIStatus); ok {
		got = s.Status().Code
	}
	if got != code {
		t.Errorf("status code %d, want %d", got, code)
	}
	return false
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
