// Package kindtest checks a kind's strategy against answers recorded from kube-apiserver, for the
// tests of the kinds' packages.
package kindtest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
)

// CreateAsKube runs, for each file of testdata/in, what a create runs of k's strategy (decoding
// defaults, PrepareForCreate, Validate) and compares the outcome with the file of the same name in
// testdata/want, kube's answer to a POST of it: a Status, whose message must be the error's, or the
// object created, which diff compares (it returns what differs, "" for nothing). T is a pointer to
// the kind's k8s.io/api type.
func CreateAsKube[T runtime.Object](t *testing.T, k kinds.Kind, diff func(got, want T) string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(strings.TrimSuffix(e.Name(), ".json"), func(t *testing.T) {
			obj := newObject[T]()
			read(t, filepath.Join("testdata", "in", e.Name()), obj)
			var status struct{ Kind, Message string }
			read(t, filepath.Join("testdata", "want", e.Name()), &status)
			if d, ok := k.Strategy.(kinds.Defaulter); ok {
				d.Default(obj)
			}
			k.Strategy.PrepareForCreate(obj)
			var err error
			if errs := k.Strategy.Validate(obj); len(errs) > 0 {
				err = apierrors.NewInvalid(k.GroupVersionKind().GroupKind(), "", errs)
			}
			if status.Kind == "Status" {
				var got apierrors.APIStatus
				// The name is the object's; NewInvalid was given none, so compare from the colon on.
				if err == nil || !errors.As(err, &got) || !sameInvalid(got.Status().Message, status.Message) {
					t.Fatalf("create:\n got %v\nwant %s", err, status.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := newObject[T]()
			read(t, filepath.Join("testdata", "want", e.Name()), want)
			if d := diff(obj, want); d != "" {
				t.Error(d)
			}
		})
	}
}

func newObject[T runtime.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// sameInvalid compares two "X is invalid: ..." messages after their object names.
func sameInvalid(got, want string) bool {
	_, g, _ := strings.Cut(got, " is invalid: ")
	_, w, _ := strings.Cut(want, " is invalid: ")
	return g == w
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
