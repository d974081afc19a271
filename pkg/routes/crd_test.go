package routes

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
)

// TestInvalidCRDs runs each manifest of testdata/crds/invalid (one case per file) through parsing
// and WithCRDs and compares the problems with the .err file beside it.
func TestInvalidCRDs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "crds", "invalid", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			crds, err := ReadCRDFiles([]string{file})
			_, addErr := Builtin().WithCRDs(crds)
			problems := Errors(errors.Join(err, addErr))
			if len(problems) == 0 {
				t.Fatal("no problem found")
			}
			var b strings.Builder
			for _, p := range problems {
				var ce *CRDError
				if !errors.As(p, &ce) || ce.File != file {
					t.Errorf("problem %q does not name the file %s", p, file)
				}
				b.WriteString(strings.ReplaceAll(p.Error(), string(filepath.Separator), "/") + "\n")
			}
			golden.Check(t, filepath.Join("crds", "invalid", name+".err"), b.String())
		})
	}
}

// TestMalformedCRDNamesFileAndDocument is issue 3's must-show.
func TestMalformedCRDNamesFileAndDocument(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "crds", "invalid", "missing-kind.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := ParseCRDs("crds/widgets.yaml", data)
	if len(crds) != 1 || crds[0].Definition.Name != "widgets.example.com" {
		t.Errorf("the valid first document was not kept: %+v", crds)
	}
	want := "crds/widgets.yaml: document 2 (line 20): spec.names.kind: Required value"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to contain %q", err, want)
	}
}

func TestValidCRDs(t *testing.T) {
	crds, err := ReadCRDFiles([]string{filepath.Join("testdata", "crds", "valid")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range crds {
		got = append(got, filepath.Base(c.File)+" "+c.Definition.Name+" "+strings.TrimSuffix((&CRDError{Document: c.Document, Line: c.Line, Item: c.Item}).Where(), ": "))
	}
	want := []string{
		"gadgets.json gadgets.example.com document 1 (line 1)",
		"list.yml things.other.io document 1 (line 4) item 0",
		"widgets.yaml widgets.example.com document 1 (line 3)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("CRDs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	gadget := crds[0].Definition.Spec.Names
	if gadget.Singular != "gadget" || gadget.ListKind != "GadgetList" {
		t.Errorf("defaults not applied: %+v", gadget)
	}

	api := testAPI(t)
	w, ok := api.Resource("example.com", "v1", "widgets")
	if !ok {
		t.Fatal("no widgets")
	}
	if !w.Custom || !w.Namespaced || w.Schema == nil || w.StorageVersionHash != StorageVersionHash("example.com", "v1", "Widget") {
		t.Errorf("widget resource %+v", w)
	}
	var cols []string
	for _, c := range w.PrinterColumns {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, ","); got != "Name,Replicas,Size,Age" {
		t.Errorf("printer columns %s", got)
	}
	if s, ok := w.Subresource("scale"); !ok || s.Group != "autoscaling" || s.Kind != "Scale" || s.GoType == nil {
		t.Errorf("scale subresource %+v", s)
	}
	g, _ := api.Resource("example.com", "v1beta1", "gadgets")
	if !g.Deprecated || g.DeprecationWarning == "" || g.StorageVersionHash != StorageVersionHash("example.com", "v1", "Gadget") {
		t.Errorf("v1beta1 gadgets %+v: hash must be the storage version's", g)
	}
	if cols := g.PrinterColumns; len(cols) != 2 || cols[1].Name != "Age" {
		t.Errorf("a CRD without columns gets Name and Age: %+v", cols)
	}
	if _, ok := api.Resource("example.com", "v2alpha1", "gadgets"); ok {
		t.Errorf("an unserved version is in the API")
	}
}

func TestSplitDocuments(t *testing.T) {
	in := "# head\n---\na: 1\n---   # comment\n\n# only a comment\n--- \nb: 2\n---x: not a separator\n...\n"
	docs := splitDocuments([]byte(in))
	var got []string
	for _, d := range docs {
		got = append(got, strings.ReplaceAll(string(d.data), "\n", "|")+"@"+strconv.Itoa(d.line)+"#"+strconv.Itoa(d.index))
	}
	want := []string{"a: 1|@3#1", "b: 2|---x: not a separator|...|@8#2"}
	if !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
}

func TestReadCRDFilesErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCRDFiles([]string{filepath.Join(empty, "missing.yaml"), empty})
	problems := Errors(err)
	if len(problems) != 2 ||
		!strings.HasSuffix(problems[0].Error(), "missing.yaml: does not exist: give a CRD manifest file or a directory of them") ||
		!strings.Contains(problems[1].Error(), "holds no manifests") {
		t.Errorf("problems %q", problems)
	}
}

func TestLoadAPI(t *testing.T) {
	dir := filepath.Join("testdata", "crds")
	api, err := LoadAPI([]string{filepath.Join(dir, "valid")}, map[string]string{"example.com/v1beta1": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := api.Resource("example.com", "v1beta1", "gadgets"); ok {
		t.Errorf("example.com/v1beta1 still served")
	}
	// A broken CRD's group is not reported again as an unknown runtime-config group; a real
	// unknown group is.
	_, err = LoadAPI([]string{filepath.Join(dir, "invalid", "no-storage.yaml")}, map[string]string{"example.com/v1": "false", "apps/v1": "true"})
	problems := Errors(err)
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "no-storage.yaml") || !strings.Contains(problems[1].Error(), "unknown api groups apps") {
		t.Errorf("problems %q", problems)
	}
}
