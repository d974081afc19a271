package crschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// FuzzDecodeBody decodes arbitrary create and update bodies of a Widget (testdata/crds.yaml: nested
// objects, a keyed list, defaults, an embedded resource, preserve-unknown-fields) under each
// fieldValidation directive, then validates what decodes. Nothing may panic; a refusal is a 400
// Status; a decoded object encodes to JSON that decodes again under Strict to the same object, and a
// valid one (one that would be stored) reads back from storage the same, but for a generation a read
// adds when it is missing: pruning and defaulting are done once and for all.
func FuzzDecodeBody(f *testing.F) {
	v := widgets(f)
	for _, body := range []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"d"},"spec":{"size":"small","color":"red"}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","bogus":1,"metadata":{"name":"w","namespace":"d","foo":1},` +
			`"spec":{"size":"small","size":"large","bogus":{"a":1},"parts":[{"name":"a","x":1}],` +
			`"nested":{"inner":{"keep":1,"known":{"a":"1","drop":2}}},"extra":{"anything":[1]},"port":{"a":1},` +
			`"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","zzz":1},"spec":{"containers":[]}}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"small","labels":{"any":"key"}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":"x"}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":1.5,"creationTimestamp":null}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"parts":[{"name":"a"},{"name":"a"}],"size":null}}`,
		`{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w"}}`,
		`{"apiVersion":"example.com/v1","metadata":{"name":"w"}}`,
		`{"kind":"Gadget","apiVersion":"other/v1"}`,
		`[1]`,
		`{"kind":`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"replicas":9007199254740993,"ratio":1e308}}`,
	} {
		for d := range directives {
			f.Add([]byte(body), uint8(d))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, directive uint8) {
		if len(body) > 64<<10 {
			return
		}
		d := directives[int(directive)%len(directives)]
		obj, warnings, err := v.DecodeBody(body, d)
		if err != nil {
			badRequest(t, err)
			return
		}
		if d == "Strict" && len(warnings) > 0 {
			t.Fatalf("warnings %q under Strict", warnings)
		}
		encoded, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatalf("the decoded object does not encode: %v", err)
		}
		again, warnings, err := v.DecodeBody(encoded, "Strict")
		if err != nil || len(warnings) > 0 {
			t.Fatalf("the decoded object, encoded as %s, does not decode again: %v %q", encoded, err, warnings)
		}
		if reencoded, err := json.Marshal(again.Object); err != nil || !bytes.Equal(encoded, reencoded) {
			t.Fatalf("the decoded object changes when it goes round again:\n%s\n%s (%v)", encoded, reencoded, err)
		}
		if errs := v.Validate(context.Background(), obj); len(errs) > 0 {
			return // never stored
		}
		stored, err := v.DecodeStored(encoded)
		if err != nil {
			t.Fatalf("the decoded object, stored as %s, does not read back: %v", encoded, err)
		}
		if _, ok := again.Object["metadata"]; ok && again.GetGeneration() == 0 {
			again.SetGeneration(1) // what a read gives an object stored without one
		}
		want, _ := json.Marshal(again.Object)
		if read, err := json.Marshal(stored.Object); err != nil || !bytes.Equal(want, read) {
			t.Fatalf("the decoded object reads back changed:\n%s\n%s (%v)", want, read, err)
		}
	})
}

// directives are the fieldValidation values DecodeBody is given ("" is the default, Warn).
var directives = []string{"", "Ignore", "Warn", "Strict"}

// badRequest fails unless err is a 400 Status.
func badRequest(t *testing.T, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %v (%T) carries no Status", err, err)
	}
	if code := status.Status().Code; code != 400 {
		t.Fatalf("a bad body answers %d: %v", code, err)
	}
}
