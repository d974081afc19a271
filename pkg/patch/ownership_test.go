package patch

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// countingConverters builds the API's converter with build, counting the builds.
func countingConverters(build func() (managedfields.TypeConverter, error)) (converters, *atomic.Int32) {
	builds := new(atomic.Int32)
	return converters{
		api: sync.OnceValues(func() (managedfields.TypeConverter, error) {
			builds.Add(1)
			return build()
		}),
		wrap: newTargetConverter,
	}, builds
}

// TestOwnershipIsBuiltOnFirstWrite: New builds no schema, media types need none, and writes racing
// to be first build it once between them.
func TestOwnershipIsBuiltOnFirstWrite(t *testing.T) {
	api := testAPI(t)
	conv, builds := countingConverters(func() (managedfields.TypeConverter, error) { return newTypeConverter(api) })
	p, err := newPatcher(api, conv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ParseType(configMaps, "application/strategic-merge-patch+json"); err != nil {
		t.Fatal(err)
	}
	if got := p.Accepted(configMaps); len(got) != 4 {
		t.Errorf("Accepted(configmaps) = %v, want 4 media types", got)
	}
	if n := builds.Load(); n != 0 {
		t.Fatalf("the schemas were built %d times before any write", n)
	}
	widgets := parseTarget(t, "example.com/v1 widgets")
	var wg sync.WaitGroup
	for i := range 8 {
		// decode may fail the test, which only the test's goroutine may do.
		obj := decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"v"}}`)
		wg.Go(func() {
			if i%2 == 0 {
				got, err := p.Update(configMaps, nil, obj, "creator")
				if err != nil {
					t.Error(err)
					return
				}
				if m := got.(metav1.Object).GetManagedFields(); len(m) != 1 || m[0].Manager != "creator" {
					t.Errorf("managedFields %v, want one entry for creator", m)
				}
				return
			}
			_, err := p.Patch(nil, Request{Target: widgets, Type: types.ApplyYAMLPatchType, Namespace: "default", Name: "w",
				Patch:   []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"s"}}`),
				Options: metav1.PatchOptions{FieldManager: "applier"}})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("the schemas were built %d times, want once", n)
	}
}

// TestOwnershipBuildFailure: machinery that cannot be built fails writes with a 500 that says why,
// every time, and leaves what needs no schema (media types, 404s) working.
func TestOwnershipBuildFailure(t *testing.T) {
	conv, builds := countingConverters(func() (managedfields.TypeConverter, error) {
		return nil, errors.New("schema trouble")
	})
	p, err := newPatcher(testAPI(t), conv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ParseType(configMaps, "application/merge-patch+json"); err != nil {
		t.Fatal(err)
	}
	obj := decode(t, p, configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`)
	for range 2 {
		_, updateErr := p.Update(configMaps, nil, obj, "creator")
		_, patchErr := p.Patch(obj, Request{Target: configMaps, Type: types.MergePatchType, Namespace: "default", Name: "a",
			Patch: []byte(`{"data":{"k":"v"}}`)})
		for _, err := range []error{updateErr, patchErr} {
			if code := statusCode(err); code != http.StatusInternalServerError || !strings.Contains(err.Error(), "schema trouble") {
				t.Errorf("error %v (code %d): want a 500 that says schema trouble", err, code)
			}
		}
	}
	// A patch of a missing object needs no schema: it is the 404 it always is.
	_, err = p.Patch(nil, Request{Target: configMaps, Type: types.MergePatchType, Namespace: "default", Name: "b", Patch: []byte(`{}`)})
	if code := statusCode(err); code != http.StatusNotFound {
		t.Errorf("patch of a missing object: %v (code %d), want a 404", err, code)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("the schemas were built %d times, want once", n)
	}
}

func statusCode(err error) int32 {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return 0
	}
	return status.Status().Code
}
