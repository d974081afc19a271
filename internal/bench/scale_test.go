package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestNeedleCounter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   int
	}{
		{"none", []string{"abc", "def"}, 0},
		{"within writes", []string{`{"name":"cm-1"},{"name":"cm-2"}`, `{"name":"cm-3"}`}, 3},
		{"split across two writes", []string{`{"na`, `me":"cm-1"}`}, 1},
		{"split across many small writes", []string{`"`, `n`, `a`, `m`, `e`, `"`, `:`, `"`, `c`, `m`, `-`, `1`}, 1},
		{"ends a write exactly", []string{`x"name":"cm-`, `1"name":"cm-2`}, 2},
		{"another name", []string{`"name":"kube-root-ca.crt"`}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &needleCounter{needle: []byte(`"name":"cm-`)}
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if c.n != tc.want {
				t.Errorf("counted %d, want %d", c.n, tc.want)
			}
		})
	}
}

func TestWatchIndex(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{
		{`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"watch-042","namespace":"scale-watch"}}}`, 42},
		{`{"type":"ADDED","object":{"metadata":{"name":"kube-root-ca.crt"}}}`, -1},
		{`{"type":"ADDED","object":{"metadata":{"name":"watch-abc"}}}`, -1},
		{`{"type":"ADDED","object":{"metadata":{"name":"watch-7`, -1},
		{``, -1},
	} {
		if got := watchIndex([]byte(tc.line)); got != tc.want {
			t.Errorf("watchIndex(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

func TestDeliveries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	acked := []time.Time{t0, t0.Add(time.Second)}
	received := [][]time.Time{
		{t0.Add(3 * time.Millisecond), t0.Add(time.Second + time.Millisecond)},
		{t0.Add(-time.Millisecond), {}}, // before the answer: 0; never: left out
	}
	got := deliveries(received, acked)
	want := []time.Duration{0, time.Millisecond, 3 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestScaleObjects(t *testing.T) {
	for _, tc := range []struct {
		kind, apiVersion, objectKind, name string
		content                            func(map[string]any) any
		want                               any
	}{
		{ScaleConfigMaps, "v1", "ConfigMap", "cm-0001234", func(o map[string]any) any { return o["data"].(map[string]any)["index"] }, "0001234"},
		{ScaleCustom, scaleGroup + "/v1", "Record", "so-0001234", func(o map[string]any) any { return o["spec"].(map[string]any)["index"] }, 1234.0},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			r := scaleResourceOf(tc.kind)
			var o map[string]any
			if err := json.Unmarshal(r.seeded(1234), &o); err != nil {
				t.Fatal(err)
			}
			meta := o["metadata"].(map[string]any)
			if o["apiVersion"] != tc.apiVersion || o["kind"] != tc.objectKind || meta["name"] != tc.name || meta["namespace"] != "scale-34" {
				t.Errorf("got %v", o)
			}
			if got := tc.content(o); got != tc.want {
				t.Errorf("content = %v, want %v", got, tc.want)
			}
			if !strings.Contains(r.collection("scale-34"), "/namespaces/scale-34/") || !strings.HasPrefix(r.collection("x"), r.all[:strings.LastIndex(r.all, "/")]) {
				t.Errorf("paths %q and %q do not agree", r.all, r.collection("scale-34"))
			}
			if !bytes.Contains(r.seeded(1), r.needle()) || bytes.Contains(r.object("scale-watch", watchName(1), 1), r.needle()) {
				t.Errorf("the needle %q counts other objects than the seeded ones", r.needle())
			}
		})
	}
}

// TestScaleCRD checks the seeded CRD against the API types and the seeded objects against its schema's
// field names, so that a typo fails here rather than a million creates into a seed.
func TestScaleCRD(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	dec := json.NewDecoder(strings.NewReader(scaleCRD))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&crd); err != nil {
		t.Fatal(err)
	}
	if crd.Name != scaleCRDName || crd.Spec.Names.Plural+"."+crd.Spec.Group != scaleCRDName || crd.Spec.Names.Kind != "Record" {
		t.Errorf("CRD %s defines %s.%s of kind %s", crd.Name, crd.Spec.Names.Plural, crd.Spec.Group, crd.Spec.Names.Kind)
	}
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	var o struct{ Spec map[string]any }
	if err := json.Unmarshal(scaleCustomObject("ns", "so-1", 1), &o); err != nil {
		t.Fatal(err)
	}
	for field := range o.Spec {
		if _, ok := props[field]; !ok {
			t.Errorf("spec.%s is not in the CRD's schema, which would prune it", field)
		}
	}
}

func TestScaleProblems(t *testing.T) {
	returned := 5 * time.Second
	good := func() *Scale {
		return &Scale{
			Kind: ScaleConfigMaps, Objects: 100_000, Namespaces: ScaleNamespaces, Guarded: true,
			Idle:  ScaleMemory{RSS: 400 << 20},
			List:  ScaleList{Clients: 1, FirstByte: 20 * time.Millisecond, Bytes: 48_000_000, Items: 100_000},
			Lists: ScaleList{Clients: 8, Peak: 600 << 20, After: ScaleMemory{RSS: 420 << 20}, AfterDelay: time.Minute, Returned: &returned},
			Gets:  ScaleGets{Requests: 100, P99: 10 * time.Millisecond},
			Paged: ScalePaged{Limit: ScalePageSize, Pages: 200},
			Watch: ScaleWatch{Watchers: 10, Events: 2, Delivered: 20},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*Scale)
		guard  bool
		want   []string
	}{
		{"within the guards", func(*Scale) {}, true, nil},
		{"memory grew", func(s *Scale) { s.Lists.Peak = s.Idle.RSS + 600<<20 }, true, []string{"grew RSS by 600.0 MiB"}},
		{"slow GETs", func(s *Scale) { s.Gets.P99 = 150 * time.Millisecond }, true, []string{"GET p99"}},
		{"slow first byte", func(s *Scale) { s.List.FirstByte = time.Second }, true, []string{"first byte"}},
		{"guards off without BENCH_GUARD", func(s *Scale) { s.List.FirstByte = time.Second }, false, nil},
		{"guards off for a run that is not CI's", func(s *Scale) { s.Guarded = false; s.List.FirstByte = time.Second }, true, nil},
		{"failed GETs fail any run", func(s *Scale) { s.Guarded = false; s.Gets.Failed, s.Gets.FirstError = 2, "boom" }, false, []string{"2 of 102 GETs during the concurrent LISTs failed, the first with: boom"}},
		{"missed events fail any run", func(s *Scale) { s.Watch.Delivered, s.Watch.Missed = 19, 1 }, false, []string{"1 of 20 watch events"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.change(s)
			errs := s.problems(tc.guard)
			if len(errs) != len(tc.want) {
				t.Fatalf("problems = %v, want %d matching %q", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("problem %q lacks %q", errs[i], w)
				}
			}
			var b strings.Builder
			if err := (&Report{Scale: s}).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "scale: 100000 ConfigMaps (480 bytes each as listed)") {
				t.Errorf("report lacks the scale table:\n%s", b.String())
			}
		})
	}
}
