package storage

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// FuzzParseResourceVersion reads arbitrary resourceVersion query parameters. It must never panic,
// must refuse with an Invalid StorageError, and must accept only what a server sent: a positive
// decimal revision, digits only (kube parses it as an unsigned number, so "+5" is not one).
func FuzzParseResourceVersion(f *testing.F) {
	for _, rv := range []string{"1", "12345", "0", "", "-1", "+5", "007", "9223372036854775807", "9223372036854775808", "1e3", " 1", "0x10"} {
		f.Add(rv)
	}
	f.Fuzz(func(t *testing.T, rv string) {
		n, err := ParseResourceVersion(rv)
		if err != nil {
			var se *StorageError
			if !errors.As(err, &se) || se.Code != Invalid {
				t.Fatalf("ParseResourceVersion(%q) failed with %v (%T), want an Invalid StorageError", rv, err, err)
			}
			return
		}
		if n <= 0 || !allDigits(rv) {
			t.Fatalf("ParseResourceVersion(%q) accepted %d", rv, n)
		}
		if back, err := strconv.ParseUint(rv, 10, 64); err != nil || int64(back) != n {
			t.Fatalf("ParseResourceVersion(%q) = %d, kube reads %d, %v", rv, n, back, err)
		}
	})
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// FuzzWithResourceVersion splices a resourceVersion into arbitrary stored values (what etcd holds
// is input too: another writer may have put it there). It must never panic or read out of bounds;
// for a value that is a JSON object with a metadata object, the result is valid JSON whose
// metadata.resourceVersion is the revision.
func FuzzWithResourceVersion(f *testing.F) {
	for _, v := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"v"}}`,
		`{"metadata":{}}`,
		` { "kind" : "X" , "spec" : {"a":[1,{"b":"}"}]}, "metadata" : { } } `,
		`{"a":"\"metadata\":{","metadata":{"name":"x"}}`,
		`{"metadata":"x"}`,
		`{"kind":"X"}`,
		`[]`,
		`{"a":`,
		`{"a":"\`,
	} {
		f.Add([]byte(v), int64(42))
	}
	f.Fuzz(func(t *testing.T, value []byte, rv int64) {
		if len(value) > 64<<10 {
			return
		}
		out, err := WithResourceVersion(nil, value, rv)
		if placed, perr := AppendWithResourceVersion(nil, KeyValue{Value: value, ModRevision: rv}.WithPlace()); string(placed) != string(out) || (perr == nil) != (err == nil) {
			t.Fatalf("the recorded place gives %q, %v; WithResourceVersion %q, %v", placed, perr, out, err)
		}
		if err != nil {
			if !errors.Is(err, ErrNoMetadata) {
				t.Fatalf("WithResourceVersion(%q) failed with %v", value, err)
			}
			return
		}
		// The promise is for stored objects: one metadata object, no member twice (the scanner takes
		// the first, a decoder the last), no resourceVersion yet.
		in, ok := members(value)
		if !ok || in["metadata"] == nil {
			return // what comes out is unspecified, but it came out without a panic
		}
		if meta, ok := members(in["metadata"]); !ok || meta["resourceVersion"] != nil {
			return
		}
		var got struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(out, &got); err != nil {
			t.Fatalf("WithResourceVersion(%q) = %q, not JSON: %v", value, out, err)
		}
		if got.Metadata.ResourceVersion != strconv.FormatInt(rv, 10) {
			t.Fatalf("WithResourceVersion(%q, %d) = %q", value, rv, out)
		}
	})
}

// members decodes a JSON object's members, case-sensitively as kube does; false for anything else
// and for an object that has a member twice.
func members(v []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	strict, err := sigsjson.UnmarshalStrict(v, &m, sigsjson.DisallowDuplicateFields)
	return m, err == nil && len(strict) == 0 && m != nil
}
