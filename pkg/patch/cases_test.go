package patch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// A case file under testdata/cases is a sequence of writes to one object, as clients send them: its
// YAML input (a target, an optional stored object, steps), then caseSeparator, then what each step
// returns. Each step works on what the previous successful step left; a created object gets a uid
// and a creation time as the registry would give it. go test -update rewrites the expected part.
const caseSeparator = "=== expected ==="

// caseFile is the input part of a case.
type caseFile struct {
	// Target is "<apiVersion> <resource>[/<subresource>]".
	Target    string          `json:"target"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Current   json.RawMessage `json:"current"`
	Steps     []caseStep      `json:"steps"`
}

// caseStep is one write.
type caseStep struct {
	// Type is json, merge, strategic or apply (a PATCH), create or update (a POST or PUT whose
	// ownership Patcher.Update records).
	Type string `json:"type"`
	// ContentType, when set, is a PATCH's Content-Type header, parsed with ParseType instead of Type.
	ContentType *string `json:"contentType"`
	// Target, Namespace and Name override the case's for this step.
	Target    string  `json:"target"`
	Namespace *string `json:"namespace"`
	Name      *string `json:"name"`
	// The query parameters and the User-Agent.
	FieldManager    string `json:"fieldManager"`
	FieldValidation string `json:"fieldValidation"`
	Force           *bool  `json:"force"`
	UserAgent       string `json:"userAgent"`
	// Patch is the PATCH body, Object the body of a create or update.
	Patch  string          `json:"patch"`
	Object json.RawMessage `json:"object"`
}

var patchTypes = map[string]types.PatchType{
	"json":      types.JSONPatchType,
	"merge":     types.MergePatchType,
	"strategic": types.StrategicMergePatchType,
	"apply":     types.ApplyYAMLPatchType,
}

func TestCases(t *testing.T) {
	p := testPatcher(t)
	forEachCase(t, func(t *testing.T, file, input, want string) {
		got := runCase(t, p, input)
		if *update {
			out := strings.TrimRight(input, "\n") + "\n" + caseSeparator + "\n" + got
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if got != want {
			t.Errorf("%s: output differs (if the change is intended, run go test ./pkg/patch -update)\ngot:\n%s\nwant:\n%s", file, got, want)
		}
	})
}

// forEachCase runs test on every case file, in parallel subtests, with its input and expected
// parts.
func forEachCase(t *testing.T, test func(t *testing.T, file, input, want string)) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/cases")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, found := strings.Cut(string(data), "\n"+caseSeparator+"\n")
			if !found {
				input = strings.TrimSuffix(string(data), "\n"+caseSeparator)
			}
			test(t, file, input, want)
		})
	}
}

// runCase runs the steps of one case and prints what each returned.
func runCase(t *testing.T, p *Patcher, input string) string {
	var c caseFile
	if err := yaml.UnmarshalStrict([]byte(input), &c); err != nil {
		t.Fatalf("case input: %v", err)
	}
	if len(c.Steps) == 0 {
		t.Fatal("case has no steps")
	}
	var current runtime.Object
	if len(c.Current) > 0 {
		current = decode(t, p, parseTarget(t, c.Target), string(c.Current))
	}
	var out strings.Builder
	for i, step := range c.Steps {
		fmt.Fprintf(&out, "### step %d: %s\n", i+1, step.describe())
		before := ""
		if current != nil {
			before = render(t, current)
		}
		obj, text := runStep(t, p, c, step, current)
		out.WriteString(text)
		if current != nil && render(t, current) != before {
			t.Errorf("step %d modified the current object", i+1)
		}
		if obj != nil {
			current = stored(t, obj)
		}
	}
	return out.String()
}

// runStep runs one write against current and returns the new object (nil on error) and its report.
func runStep(t *testing.T, p *Patcher, c caseFile, step caseStep, current runtime.Object) (runtime.Object, string) {
	target := c.Target
	if step.Target != "" {
		target = step.Target
	}
	tg := parseTarget(t, target)
	ns, name := c.Namespace, c.Name
	if step.Namespace != nil {
		ns = *step.Namespace
	}
	if step.Name != nil {
		name = *step.Name
	}
	switch step.Type {
	case "create", "update":
		live := current
		if step.Type == "create" {
			live = nil
		}
		obj, err := p.Update(tg, live, decode(t, p, tg, string(step.Object)), Manager(step.FieldManager, step.UserAgent))
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		return obj, step.Type + "d\n" + render(t, obj)
	}
	typ, ok := patchTypes[step.Type]
	if step.ContentType != nil {
		parsed, err := p.ParseType(tg, *step.ContentType)
		if err != nil {
			return nil, "error\n" + renderError(t, err)
		}
		typ, ok = parsed, true
	}
	if !ok {
		t.Fatalf("step type %q: want json, merge, strategic, apply, create or update", step.Type)
	}
	res, err := p.Patch(current, Request{
		Target: tg, Type: typ, Namespace: ns, Name: name, Patch: []byte(step.Patch), UserAgent: step.UserAgent,
		Options: metav1.PatchOptions{FieldManager: step.FieldManager, FieldValidation: step.FieldValidation, Force: step.Force},
	})
	if err != nil {
		return nil, "error\n" + renderError(t, err)
	}
	var b strings.Builder
	if res.Created {
		b.WriteString("created\n")
	} else {
		b.WriteString("patched\n")
	}
	b.WriteString(render(t, res.Object))
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return res.Object, b.String()
}

// describe sums a step up for the report's header line.
func (s caseStep) describe() string {
	parts := []string{s.Type}
	if s.ContentType != nil {
		parts = []string{fmt.Sprintf("Content-Type=%q", *s.ContentType)}
	}
	if s.Target != "" {
		parts = append(parts, "target="+s.Target)
	}
	if s.FieldManager != "" {
		parts = append(parts, "fieldManager="+s.FieldManager)
	}
	if s.Force != nil {
		parts = append(parts, fmt.Sprintf("force=%t", *s.Force))
	}
	if s.FieldValidation != "" {
		parts = append(parts, "fieldValidation="+s.FieldValidation)
	}
	if s.UserAgent != "" {
		parts = append(parts, "User-Agent="+s.UserAgent)
	}
	return strings.Join(parts, " ")
}
