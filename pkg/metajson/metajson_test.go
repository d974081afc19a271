package metajson

import (
	"encoding/json"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"
)

// decodedPaths are the two ways the server otherwise writes a stored object's metadata: kube's
// unstructured getters (meta.AsPartialObjectMetadata, a Table row's) and decoding into ObjectMeta (a
// PartialObjectMetadataList item's). ok is false when the object does not decode.
func decodedPaths(stored []byte, rv int64) (viaGetters, viaStruct []byte, ok bool) {
	content := map[string]any{}
	if sigsjson.UnmarshalCaseSensitivePreserveInts(stored, &content) != nil {
		return nil, nil, false
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetResourceVersion(strconv.FormatInt(rv, 10))
	m, err := meta.Accessor(u)
	if err != nil {
		return nil, nil, false
	}
	viaGetters, err = json.Marshal(meta.AsPartialObjectMetadata(m).ObjectMeta)
	if err != nil {
		return nil, nil, false
	}
	var typed struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if json.Unmarshal(stored, &typed) != nil {
		return viaGetters, nil, false
	}
	typed.Metadata.ResourceVersion = strconv.FormatInt(rv, 10)
	viaStruct, err = json.Marshal(typed.Metadata)
	return viaGetters, viaStruct, err == nil
}

func withMeta(metadata string) string {
	return `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":` + metadata + `,"spec":{"a":1}}`
}

var cases = []struct {
	name   string
	stored string
	taken  bool
}{
	{name: "as the server stores a custom resource", taken: true, stored: withMeta(`{"creationTimestamp":"2024-05-01T11:00:00Z","generation":1,` +
		`"labels":{"n":"0"},"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:a":{}}},` +
		`"manager":"kubectl","operation":"Update","time":"2024-05-01T11:00:00Z"}],"name":"w","namespace":"ns","resourceVersion":"9","uid":"u"}`)},
	{name: "every member", taken: true, stored: withMeta(`{"annotations":{"a":"1","b/c":"two words"},"creationTimestamp":"2024-05-01T11:00:00Z",` +
		`"deletionGracePeriodSeconds":0,"deletionTimestamp":"2024-05-01T11:59:00Z","finalizers":["example.com/keep"],"generateName":"w-",` +
		`"generation":7,"labels":{"app":"web"},"managedFields":[{"fieldsType":"FieldsV1","fieldsV1":{"f:status":{}},"manager":"m",` +
		`"operation":"Apply","subresource":"status","time":"2024-05-01T11:10:00Z"}],"name":"w-1","namespace":"ns","ownerReferences":` +
		`[{"apiVersion":"v1","blockOwnerDeletion":true,"controller":false,"kind":"ConfigMap","name":"o","uid":"u-1"},{"uid":"u-2"}],"selfLink":"/x","uid":"u"}`)},
	{name: "empty members", taken: true, stored: withMeta(`{"annotations":{},"finalizers":[],"labels":{},"managedFields":[],"name":"e","ownerReferences":[]}`)},
	{name: "no creation time", taken: true, stored: withMeta(`{"name":"n"}`)},
	{name: "no metadata", stored: `{"kind":"Gizmo"}`},
	{name: "a member ObjectMeta lacks", stored: withMeta(`{"name":"x","zone":"a"}`)},
	{name: "a name in other case", stored: withMeta(`{"Name":"x"}`)},
	{name: "HTML in a label", stored: withMeta(`{"labels":{"a":"<b>"},"name":"h"}`)},
	{name: "an escaped name", stored: withMeta(`{"name":"a\u0062"}`)},
	{name: "fractional time", stored: withMeta(`{"creationTimestamp":"2024-05-01T11:00:00.5Z","name":"f"}`)},
	{name: "null labels", stored: withMeta(`{"labels":null,"name":"n"}`)},
	{name: "generation as a float", stored: withMeta(`{"generation":1.0,"name":"g"}`)},
	{name: "fieldsV1 with space", stored: withMeta(`{"managedFields":[{"fieldsV1":{"f:a": {}},"manager":"m"}],"name":"m"}`)},
}

// TestAppendMatchesDecoding checks that whenever Append writes a stored object's metadata, it writes
// what both decoding paths write.
func TestAppendMatchesDecoding(t *testing.T) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, taken := appendStored([]byte(tt.stored), 42)
			if taken != tt.taken {
				t.Fatalf("taken: %v, want %v (%s)", taken, tt.taken, got)
			}
			if taken {
				checkSame(t, []byte(tt.stored), got)
			}
		})
	}
}

func appendStored(stored []byte, rv int64) ([]byte, bool) {
	var m Meta
	if !m.Read(stored) {
		return nil, false
	}
	return m.Append(nil, rv)
}

func checkSame(t *testing.T, stored, got []byte) {
	t.Helper()
	viaGetters, viaStruct, ok := decodedPaths(stored, 42)
	if !ok {
		t.Fatalf("Append wrote %s for an object that does not decode", got)
	}
	if string(got) != string(viaGetters) || string(got) != string(viaStruct) {
		t.Fatalf("Append:\n%s\nunstructured getters:\n%s\ndecoded ObjectMeta:\n%s", got, viaGetters, viaStruct)
	}
}

// FuzzAppend checks Append against both decoding paths on any stored JSON it takes.
func FuzzAppend(f *testing.F) {
	for _, tt := range cases {
		f.Add(tt.stored)
	}
	f.Fuzz(func(t *testing.T, stored string) {
		got, taken := appendStored([]byte(stored), 42)
		if !taken || !json.Valid([]byte(stored)) {
			return // stored objects are JSON the server wrote
		}
		checkSame(t, []byte(stored), got)
	})
}

// BenchmarkAppend writes a stored custom resource's metadata as a PartialObjectMetadataList item
// needs it: from the stored JSON, and decoded into ObjectMeta then marshalled.
func BenchmarkAppend(b *testing.B) {
	stored := []byte(cases[0].stored)
	var dst []byte
	b.Run("stored", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m Meta
			var ok bool
			if !m.Read(stored) {
				b.Fatal("declined")
			}
			if dst, ok = m.Append(dst[:0], 42); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var typed struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(stored, &typed); err != nil {
				b.Fatal(err)
			}
			typed.Metadata.ResourceVersion = "42"
			if _, err := json.Marshal(typed.Metadata); err != nil {
				b.Fatal(err)
			}
		}
	})
}
