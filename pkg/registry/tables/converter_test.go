package tables

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes"
)

var (
	coreV1     = schema.GroupVersion{Version: "v1"}
	configMaps = coreV1.WithResource("configmaps")
	widgets    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		query   string
		want    metav1.IncludeObjectPolicy
		wantErr string
	}{
		{"", "", ""},
		{"includeObject=Metadata", metav1.IncludeMetadata, ""},
		{"includeObject=Object", metav1.IncludeObject, ""},
		{"includeObject=None", metav1.IncludeNone, ""},
		{"includeObject=None&includeObject=bad", metav1.IncludeNone, ""},
		{"includeObject=", "", ""},
		{"includeObject=object", "", `Unable to convert to Table as requested: includeObject: Invalid value: "object": must be 'Metadata', 'Object', 'None', or empty`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			o, err := ParseOptions(q)
			if tt.wantErr != "" {
				if !apierrors.IsBadRequest(err) || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want a BadRequest %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || o.IncludeObject != tt.want {
				t.Fatalf("got %+v, %v; want includeObject %q", o, err, tt.want)
			}
		})
	}
}

func TestNewBuilderRejectsBadOptions(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	_, err := c.NewBuilder(Options{Version: "v2"})
	var se *apierrors.StatusError
	if !errorsAs(err, &se) || se.ErrStatus.Code != http.StatusNotAcceptable ||
		se.ErrStatus.Message != "no Table exists in group version meta.k8s.io/v2" {
		t.Errorf("Version v2: got %v, want kube's 406", err)
	}
	if _, err := c.Watch(Options{IncludeObject: "All"}); !apierrors.IsBadRequest(err) {
		t.Errorf("Watch with includeObject=All: got %v, want a BadRequest", err)
	}
	if _, err := c.Convert(&corev1.ConfigMap{}, Options{IncludeObject: "All"}); !apierrors.IsBadRequest(err) {
		t.Errorf("Convert with includeObject=All: got %v, want a BadRequest", err)
	}
}

func errorsAs(err error, target **apierrors.StatusError) bool {
	se, ok := err.(*apierrors.StatusError)
	*target = se
	return ok
}

func TestNewErrors(t *testing.T) {
	builtinConfigMaps := func() *routes.Resource {
		r, _ := routes.Builtin().Resource("", "v1", "configmaps")
		return r
	}
	drifted := builtinConfigMaps()
	drifted.PrinterColumns = append(drifted.PrinterColumns[:1:1], routes.PrinterColumn{Name: "Keys", Type: "integer"}, drifted.PrinterColumns[2])
	tests := []struct {
		name string
		gv   schema.GroupVersion
		res  *routes.Resource
		want string
	}{
		{"model drifted from the printer", coreV1, drifted,
			"the printer columns of configmaps ([Name Keys Age]) are not those kube prints ([Name Data Age])"},
		{"computed column without a printer", schema.GroupVersion{Group: "apps", Version: "v1"}, &routes.Resource{
			Plural: "deployments", Kind: "Deployment",
			PrinterColumns: []routes.PrinterColumn{{Name: "Name", Type: "string", Format: "name"}, {Name: "Ready", Type: "string"}},
		}, `column "Ready" of deployments.apps has no JSONPath, and no printer computes it`},
		{"bad JSONPath", widgets.GroupVersion(), &routes.Resource{
			Plural: "widgets", Kind: "Widget", Custom: true,
			PrinterColumns: []routes.PrinterColumn{{Name: "Broken", Type: "string", JSONPath: ".spec[0"}},
		}, `column "Broken" of widgets.example.com: JSONPath ".spec[0": unterminated array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.gv, tt.res)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestForAPI builds a converter for every resource of the served API, which also proves that the
// model's columns of every built-in kind are those kube prints.
func TestForAPI(t *testing.T) {
	api := testAPI(t)
	convs, err := ForAPI(api)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				_, ok := convs[schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: r.Plural}]
				if r.CreateOnly() {
					if ok {
						t.Errorf("a converter for the create-only %s", r.Plural)
					}
					continue // never read, never printed
				}
				n++
				c, ok := convs[schema.GroupVersionResource{Group: g.Name, Version: v.Name, Resource: r.Plural}]
				if !ok {
					t.Errorf("no converter for %s/%s/%s", g.Name, v.Name, r.Plural)
					continue
				}
				if got, want := columnNames(c.ColumnDefinitions()), modelColumnNames(r.PrinterColumns); got != want {
					t.Errorf("%s: columns %s, the model says %s", r.Plural, got, want)
				}
			}
		}
	}
	if len(convs) != n {
		t.Errorf("%d converters for %d resources", len(convs), n)
	}

	bad := &routes.Resource{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList", Verbs: []string{"get"}, Custom: true,
		PrinterColumns: []routes.PrinterColumn{{Name: "X", Type: "string", JSONPath: "{"}}}
	badAPI, err := routes.NewAPI([]routes.Group{{Name: "example.com", Versions: []routes.Version{{Name: "v1", Resources: []routes.Resource{*bad}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ForAPI(badAPI); err == nil || !strings.Contains(err.Error(), `column "X" of widgets.example.com`) {
		t.Errorf("ForAPI with a broken column: %v", err)
	}
}

func TestColumnDefinitionsIsACopy(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	c.ColumnDefinitions()[0].Name = "changed"
	table, err := c.Convert(&corev1.ConfigMap{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	table.ColumnDefinitions[1].Name = "changed too"
	if got := c.ColumnDefinitions(); got[0].Name != "Name" || got[1].Name != "Data" {
		t.Errorf("the converter's columns changed through a copy: %s", columnNames(got))
	}
}

func TestAddRejectsOtherKinds(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	tests := []struct {
		obj  runtime.Object
		want string
	}{
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, `converting configmaps "s" to a table row: a *v1.Secret is not a *v1.ConfigMap`},
		{&metav1.Status{}, "converting a *v1.Status to a row of configmaps"},
		{&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "u"}, "data": "not a map"}},
			`converting configmaps "u" to a table row: reading it as a *v1.ConfigMap`},
	}
	for _, tt := range tests {
		b, err := c.NewBuilder(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(tt.obj); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Add(%T): %v, want an error containing %q", tt.obj, err, tt.want)
		}
	}
}

func TestFinishedBuilderRejectsRows(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	b, err := c.NewBuilder(Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Finish(metav1.ListMeta{})
	if err := b.Add(&corev1.ConfigMap{}); err == nil {
		t.Error("Add after Finish succeeded")
	}
}

// A built-in object may reach the converter as an Unstructured; its row is the typed object's.
func TestBuiltinFromUnstructured(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	created := metav1.NewTime(testNow.Add(-5 * time.Minute))
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: created}, Data: map[string]string{"k": "v"}}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Convert(typed, Options{IncludeObject: metav1.IncludeNone})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Convert(&unstructured.Unstructured{Object: content}, Options{IncludeObject: metav1.IncludeNone})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := indented(t, got), indented(t, want); g != w {
		t.Errorf("from an Unstructured:\n%s\nfrom the typed object:\n%s", g, w)
	}
}

// A resource that is neither a known kind nor a CRD evaluates its columns' JSONPaths on the typed
// object, and one without columns prints kube's default NAME and CREATED AT.
func TestOtherResources(t *testing.T) {
	pods := &routes.Resource{Plural: "pods", Kind: "Pod", PrinterColumns: []routes.PrinterColumn{
		{Name: "Name", Type: "string", Format: "name", JSONPath: ".metadata.name"},
		{Name: "Node", Type: "string", JSONPath: ".spec.nodeName"},
		{Name: "Restarts", Type: "integer", JSONPath: ".status.containerStatuses[0].restartCount"},
	}}
	c, err := New(coreV1, pods, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{RestartCount: 4}}}}
	table, err := c.Convert(pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(table.Rows[0].Cells); got != "[p node-1 4]" {
		t.Errorf("pod cells %s", got)
	}
	if got := columnNames(table.ColumnDefinitions); got != "[Name Node Restarts]" {
		t.Errorf("pod columns %s", got)
	}

	things, err := New(schema.GroupVersion{Group: "example.com", Version: "v1"}, &routes.Resource{Plural: "things", Kind: "Thing"})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetName("t")
	u.SetCreationTimestamp(metav1.NewTime(time.Date(2024, 1, 2, 4, 5, 6, 0, time.FixedZone("CET", 3600))))
	table, err = things.Convert(u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(columnNames(table.ColumnDefinitions), table.Rows[0].Cells); got != "[Name Created At][t 2024-01-02T03:05:06Z]" {
		t.Errorf("default table: %s", got)
	}
}

// Converters are shared by every request: tables of custom resources made at the same time must not
// share JSONPath state (go test -race).
func TestConcurrentTables(t *testing.T) {
	api := testAPI(t)
	c, res := testConverter(t, api, widgets)
	doc := []byte(`{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, creationTimestamp: "2024-05-01T11:00:00Z"},
		spec: {replicas: 2, ratio: 0.5, selector: {a: b}}, status: {ready: true, phase: Up, startedAt: "2024-05-01T11:30:00Z"}}`)
	obj := decodeObject(t, res, doc)
	want, err := c.Convert(obj, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := c.Convert(obj, Options{})
				if err == nil {
					var raw []byte
					if raw, err = json.Marshal(got); err == nil && string(raw) != string(wantJSON) {
						err = fmt.Errorf("a concurrent table differs:\n%s", raw)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Each table reads the clock once, so that its rows agree on what "now" is.
func TestClockReadOncePerTable(t *testing.T) {
	reads := 0
	clock := func() time.Time { reads++; return testNow }
	res, _ := routes.Builtin().Resource("", "v1", "configmaps")
	c, err := New(coreV1, res, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{Items: make([]corev1.ConfigMap, 3)}
	if _, err := c.Convert(list, Options{}); err != nil {
		t.Fatal(err)
	}
	if reads != 1 {
		t.Errorf("the clock was read %d times for one table", reads)
	}
}

// A watch whose first event fails to convert still sends the column definitions with the first
// table it does send.
func TestWatchHeadersAfterAFailure(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), configMaps)
	w, err := c.Watch(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Convert(&corev1.Secret{}); err == nil {
		t.Fatal("a Secret converted as a ConfigMap")
	}
	first, err := w.Convert(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.Convert(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ColumnDefinitions) != 3 || second.ColumnDefinitions != nil {
		t.Errorf("column definitions: first %d, second %v", len(first.ColumnDefinitions), second.ColumnDefinitions)
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{-2 * time.Second, "<invalid>"},
		{45 * time.Second, "45s"},
		{119 * time.Second, "119s"},
		{5 * time.Minute, "5m"},
		{5*time.Minute + 30*time.Second, "5m30s"},
		{90 * time.Minute, "90m"},
		{3*time.Hour + 2*time.Minute, "3h2m"},
		{20 * time.Hour, "20h"},
		{48 * time.Hour, "2d"},
		{50 * time.Hour, "2d2h"},
		{400 * 24 * time.Hour, "400d"},
		{(3*365 + 45) * 24 * time.Hour, "3y45d"},
		{10 * 365 * 24 * time.Hour, "10y"},
	}
	for _, tt := range tests {
		if got := printers.Age(metav1.NewTime(testNow.Add(-tt.ago)), testNow); got != tt.want {
			t.Errorf("age %v ago = %q, want %q", tt.ago, got, tt.want)
		}
	}
	if got := printers.Age(metav1.Time{}, testNow); got != "<unknown>" {
		t.Errorf("age of a zero time = %q", got)
	}
	if got := printers.MicroAge(metav1.MicroTime{}, testNow); got != "<unknown>" {
		t.Errorf("microAge of a zero time = %q", got)
	}
}

func TestCellValue(t *testing.T) {
	tests := []struct {
		typ   string
		value any
		want  any
	}{
		{"integer", int64(42), int64(42)},
		{"integer", 3.9, int64(3)},
		{"integer", json.Number("7"), int64(7)},
		{"integer", json.Number("7.5"), nil},
		{"integer", true, nil},
		{"integer", "1", nil},
		{"number", int64(42), float64(42)},
		{"number", 0.25, 0.25},
		{"number", json.Number("2.5"), 2.5},
		{"number", "2.5", nil},
		{"boolean", false, false},
		{"boolean", "true", nil},
		{"string", "s", "s"},
		{"string", int64(1), nil},
		{"date", "2024-05-01T11:57:00Z", "3m"},
		{"date", "", "<unknown>"},
		{"date", "null", "<unknown>"},
		{"date", "May 1st", "<invalid>"},
		{"date", int64(1), nil},
		{"array", []any{}, nil},
		{"integer", nil, nil},
	}
	for _, tt := range tests {
		if got := cellValue(tt.typ, tt.value, testNow); got != tt.want {
			t.Errorf("cellValue(%s, %#v) = %#v, want %#v", tt.typ, tt.value, got, tt.want)
		}
	}
}

// String columns print what they find as JSONPath prints it: an explicit null is "<no value>" (the
// text/template rendering JSONPath uses, which kube's CRD convertor shows too), a missing field null.
func TestStringColumns(t *testing.T) {
	res := &routes.Resource{Plural: "widgets", Kind: "Widget", Custom: true, PrinterColumns: []routes.PrinterColumn{
		{Name: "V", Type: "string", JSONPath: ".spec.v"},
	}}
	c, err := New(widgets.GroupVersion(), res)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		value any
		want  any
	}{
		{"text", "text"},
		{int64(3), "3"},
		{1.5, "1.5"},
		{true, "true"},
		{[]any{"a", int64(1)}, `["a",1]`},
		{map[string]any{"k": "v"}, `{"k":"v"}`},
		{nil, "<no value>"},
	}
	for _, tt := range tests {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"v": tt.value}}}
		table, err := c.Convert(u, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := table.Rows[0].Cells[1]; got != tt.want {
			t.Errorf("value %#v prints %#v, want %#v", tt.value, got, tt.want)
		}
	}
	missing := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w"}}}
	table, err := c.Convert(missing, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := table.Rows[0].Cells[1]; got != nil {
		t.Errorf("a missing field prints %#v, want nil", got)
	}
}

// A custom resource with a top-level items array is still one object, not a list.
func TestConvertCustomResourceWithItems(t *testing.T) {
	c, _ := testConverter(t, testAPI(t), widgets)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "resourceVersion": "5"},
		"items":    []any{map[string]any{"metadata": map[string]any{"name": "inner"}}},
	}}
	table, err := c.Convert(u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "w" || table.ResourceVersion != "5" {
		t.Errorf("got rows %v, resourceVersion %q; want the one widget w at 5", table.Rows, table.ResourceVersion)
	}
}
