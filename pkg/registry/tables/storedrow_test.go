package tables

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
)

var gizmos = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}

// storedRowConverters are the converters AppendStoredRow is checked with: gizmos print kube's default
// columns; sprockets are gizmos with a plain column of each type it reads from stored JSON; widgets
// have a number column, which it leaves to AppendRow.
func storedRowConverters(t testing.TB) map[string]*Converter {
	api := testAPI(t)
	g, gRes := testConverter(t, api, gizmos)
	w, _ := testConverter(t, api, widgets)
	sRes := *gRes
	sRes.PrinterColumns = []routes.PrinterColumn{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Ready", Type: "boolean", JSONPath: ".status.ready"},
		{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
		{Name: "Started", Type: "date", Priority: 1, JSONPath: ".status.startedAt"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	s, err := New(gizmos.GroupVersion(), &sRes, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Converter{"gizmos": g, "sprockets": s, "widgets": w}
}

// slowRow is AppendRow's row of a stored object, decoded as the handlers decode it.
func slowRow(b *Builder, stored []byte, rv int64) ([]byte, error) {
	content := map[string]any{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(stored, &content); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetResourceVersion(strconv.FormatInt(rv, 10))
	return b.AppendRow(nil, u)
}

const seededWidget = `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"creationTimestamp":"2024-05-01T11:00:00Z","generation":1,` +
	`"labels":{"n":"0"},"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:n":{}}},` +
	`"f:spec":{".":{},"f:color":{},"f:size":{}}},"manager":"Go-http-client","operation":"Update","time":"2024-05-01T11:00:00Z"}],` +
	`"name":"w-000000","namespace":"seed-0","resourceVersion":"137","uid":"b3dc9688-9048-4ab4-b51b-7021c373f3e9"},` +
	`"spec":{"color":"red","replicas":3},"status":{"phase":"Running","ready":true,"startedAt":"2024-05-01T11:30:00Z"}}`

// withMeta is seededWidget with its metadata replaced, and spec and status as given when not empty.
func withMeta(metadata, spec, status string) string {
	s := `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":` + metadata
	if spec != "" {
		s += `,"spec":` + spec
	}
	if status != "" {
		s += `,"status":` + status
	}
	return s + "}"
}

// storedRowCases are stored objects with whether AppendStoredRow takes them (for the converters
// that read stored JSON at all); whenever it does, its row must be AppendRow's, byte for byte.
var storedRowCases = []struct {
	name   string
	stored string
	fast   bool
}{
	{name: "as seeded", stored: seededWidget, fast: true},
	{name: "every member", fast: true, stored: withMeta(`{"annotations":{"a":"1","b/c":"two words"},"creationTimestamp":"2024-05-01T11:00:00Z",`+
		`"deletionGracePeriodSeconds":0,"deletionTimestamp":"2024-05-01T11:59:00Z","finalizers":["example.com/keep","x"],"generateName":"w-",`+
		`"generation":7,"labels":{"app":"web","tier":"front"},"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1",`+
		`"fieldsV1":{"f:status":{}},"manager":"kubectl","operation":"Apply","subresource":"status","time":"2024-05-01T11:10:00Z"}],`+
		`"name":"w-1","namespace":"ns","ownerReferences":[{"apiVersion":"v1","blockOwnerDeletion":true,"controller":false,"kind":"ConfigMap",`+
		`"name":"owner","uid":"u-1"},{"apiVersion":"v1","kind":"Secret","name":"s","uid":"u-2"}],"selfLink":"/x","uid":"u"}`,
		`{"replicas":0}`, `{"phase":"","ready":false,"startedAt":"2024-04-01T00:00:00Z"}`)},
	{name: "empty members", fast: true, stored: withMeta(`{"annotations":{},"finalizers":[],"generation":0,"labels":{},"managedFields":[],`+
		`"name":"e","namespace":"","ownerReferences":[],"uid":""}`, "", "")},
	{name: "no creation time", fast: true, stored: withMeta(`{"name":"n"}`, `{}`, `{}`)},
	{name: "no metadata", fast: false, stored: `{"apiVersion":"example.com/v1","kind":"Gizmo"}`},
	{name: "owner reference without names", fast: true, stored: withMeta(`{"name":"o","ownerReferences":[{"uid":"u"}]}`, "", "")},
	{name: "label needing HTML escapes", stored: withMeta(`{"labels":{"a":"<b>"},"name":"h"}`, "", "")},
	{name: "unicode name", stored: withMeta(`{"name":"caf\u00e9"}`, "", "")},
	{name: "escaped annotation", stored: withMeta(`{"annotations":{"a":"x\"y"},"name":"q"}`, "", "")},
	{name: "fractional creation time", stored: withMeta(`{"creationTimestamp":"2024-05-01T11:00:00.5Z","name":"f"}`, "", "")},
	{name: "offset creation time", stored: withMeta(`{"creationTimestamp":"2024-05-01T12:00:00+01:00","name":"f"}`, "", "")},
	{name: "zero creation time", stored: withMeta(`{"creationTimestamp":"0001-01-01T00:00:00Z","name":"z"}`, "", "")},
	{name: "null creation time", stored: withMeta(`{"creationTimestamp":null,"name":"z"}`, "", "")},
	{name: "member ObjectMeta lacks", stored: withMeta(`{"name":"u","zone":"a"}`, "", "")},
	{name: "labels out of order", stored: withMeta(`{"labels":{"b":"1","a":"2"},"name":"o"}`, "", "")},
	{name: "label not a string", stored: withMeta(`{"labels":{"a":1},"name":"o"}`, "", "")},
	{name: "generation as a float", stored: withMeta(`{"generation":1.0,"name":"g"}`, "", "")},
	{name: "fieldsV1 unsorted", stored: withMeta(`{"managedFields":[{"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{},"f:metadata":{}},"manager":"m"}],"name":"m"}`, "", "")},
	{name: "managed fields member unknown", stored: withMeta(`{"managedFields":[{"manager":"m","extra":1}],"name":"m"}`, "", "")},
	{name: "owner reference controller not a bool", stored: withMeta(`{"name":"o","ownerReferences":[{"controller":"yes","uid":"u"}]}`, "", "")},
	{name: "spaces", fast: true, stored: "{ \"metadata\" : { \"name\" : \"s\" , \"labels\" : { \"a\" : \"b\" } } , \"spec\" : { \"replicas\" : 2 } }"},
}

// columnCases check the cells of sprockets' columns: gizmos take each of these as they take any
// object, and sprockets read or decline them.
var columnCases = []struct {
	name, spec, status string
	fast               bool
}{
	{name: "all set", spec: `{"replicas":3}`, status: `{"phase":"Up","ready":true,"startedAt":"2024-05-01T11:30:00Z"}`, fast: true},
	{name: "none set", spec: `{}`, status: `{}`, fast: true},
	{name: "no spec or status", fast: true},
	{name: "integer as a float", spec: `{"replicas":3.0}`},
	{name: "integer as a string", spec: `{"replicas":"3"}`},
	{name: "bool as a string", status: `{"ready":"true"}`},
	{name: "string as a number", status: `{"phase":1}`},
	{name: "string with escapes", status: `{"phase":"a\nb"}`},
	{name: "date not a date", status: `{"startedAt":"soon"}`},
	{name: "path through a string", spec: `"replicas"`},
	{name: "null value", spec: `{"replicas":null}`},
	{name: "large integer", spec: `{"replicas":9007199254740993}`, fast: true},
}

func TestAppendStoredRow(t *testing.T) {
	convs := storedRowConverters(t)
	check := func(t *testing.T, conv string, stored string, opts Options, wantFast bool) {
		t.Helper()
		b, err := convs[conv].NewBuilder(opts)
		if err != nil {
			t.Fatal(err)
		}
		got, fast := b.AppendStoredRow([]byte("prefix"), []byte(stored), 4242)
		if fast != wantFast {
			t.Fatalf("%s: AppendStoredRow took it: %v, want %v\n%s", conv, fast, wantFast, got)
		}
		if !fast {
			if string(got) != "prefix" {
				t.Fatalf("%s: declined but changed dst: %s", conv, got)
			}
			return
		}
		want, err := slowRow(b, []byte(stored), 4242)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("%s: stored row:\n%s\nAppendRow's:\n%s", conv, got[len("prefix"):], want)
		}
	}
	for _, tt := range storedRowCases {
		t.Run(tt.name, func(t *testing.T) {
			check(t, "gizmos", tt.stored, Options{}, tt.fast)
			check(t, "sprockets", tt.stored, Options{Version: VersionV1beta1}, tt.fast)
			check(t, "widgets", tt.stored, Options{}, false)
			check(t, "gizmos", tt.stored, Options{IncludeObject: metav1.IncludeNone}, false)
			check(t, "gizmos", tt.stored, Options{IncludeObject: metav1.IncludeObject}, false)
		})
	}
	for _, tt := range columnCases {
		t.Run("column "+tt.name, func(t *testing.T) {
			stored := withMeta(`{"creationTimestamp":"2024-05-01T11:00:00Z","name":"c"}`, tt.spec, tt.status)
			check(t, "gizmos", stored, Options{}, true)
			check(t, "sprockets", stored, Options{}, tt.fast)
		})
	}
}

// FuzzAppendStoredRow checks that a row read from stored JSON is always AppendRow's row, whatever
// the stored object holds.
func FuzzAppendStoredRow(f *testing.F) {
	for _, tt := range storedRowCases {
		f.Add(tt.stored)
	}
	for _, tt := range columnCases {
		f.Add(withMeta(`{"name":"c"}`, tt.spec, tt.status))
	}
	convs := storedRowConverters(f)
	f.Fuzz(func(t *testing.T, stored string) {
		for _, conv := range []string{"gizmos", "sprockets"} {
			b, err := convs[conv].NewBuilder(Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := slowRow(b, []byte(stored), 7)
			got, fast := b.AppendStoredRow(nil, []byte(stored), 7)
			if !fast {
				continue
			}
			if err != nil {
				// Stored objects are JSON the server wrote; a quick read of something else may
				// take it, but never yields a row where decoding would say it is not JSON.
				if strings.Contains(err.Error(), "invalid character") || strings.Contains(err.Error(), "unexpected end") {
					continue
				}
				t.Fatalf("%s: AppendRow failed (%v) where AppendStoredRow wrote %s", conv, err, got)
			}
			if string(got) != string(want) {
				t.Fatalf("%s: stored row:\n%s\nAppendRow's:\n%s", conv, got, want)
			}
		}
	})
}

// BenchmarkAppendStoredRow is the row of one stored custom resource as a streamed Table LIST writes
// it: read from stored JSON, and decoded then marshalled as AppendRow does.
func BenchmarkAppendStoredRow(b *testing.B) {
	conv := storedRowConverters(b)["sprockets"]
	stored := []byte(seededWidget)
	bl, err := conv.NewBuilder(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.Run("stored", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ok bool
			if dst, ok = bl.AppendStoredRow(dst[:0], stored, 100); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := slowRow(bl, stored, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}
