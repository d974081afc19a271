package podtemplates

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The files under testdata/want are what kube-apiserver v1.37.2 answered to a POST of the file of the
// same name under testdata/in (i-labels: a GET of it as a Table), recorded with the reference server
// (../shared/reference).

func decode(t *testing.T, name string) *corev1.PodTemplate {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "in", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var pt corev1.PodTemplate
	if err := json.Unmarshal(raw, &pt); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &pt
}

func want(t *testing.T, name string) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "want", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// create runs what the store runs on a create, as far as this kind's part goes: decoding defaults,
// preparation and validation.
func create(pt *corev1.PodTemplate) error {
	s := strategy{}
	s.Default(pt)
	s.PrepareForCreate(pt)
	if errs := s.Validate(pt); len(errs) > 0 {
		return apierrors.NewInvalid(Kind().GroupVersionKind().GroupKind(), pt.Name, errs)
	}
	return nil
}

func TestCreateAsKube(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		if name == "i-labels" {
			continue // a table, TestTableAsKube
		}
		t.Run(name, func(t *testing.T) {
			pt := decode(t, name)
			w := want(t, name)
			err := create(pt)
			if string(w["kind"]) == `"Status"` {
				var status apierrors.APIStatus
				if err == nil || !errors.As(err, &status) {
					t.Fatalf("create = %v, want kube's %s", err, w["message"])
				}
				st := status.Status()
				st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"} // as the handlers write it
				got, _ := json.Marshal(st)
				var wantStatus metav1.Status
				raw, _ := os.ReadFile(filepath.Join("testdata", "want", name+".json"))
				_ = json.Unmarshal(raw, &wantStatus)
				wantJSON, _ := json.Marshal(wantStatus)
				if !bytes.Equal(got, wantJSON) {
					t.Errorf("status:\n got %s\nwant %s", got, wantJSON)
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if pt.Generation != 1 {
				t.Errorf("generation = %d, want 1", pt.Generation)
			}
			got, _ := json.Marshal(pt.Template)
			if !bytes.Equal(got, w["template"]) {
				t.Errorf("template:\n got %s\nwant %s", got, w["template"])
			}
		})
	}
}

func TestTableAsKube(t *testing.T) {
	var table metav1.Table
	raw, err := os.ReadFile(filepath.Join("testdata", "want", "i-labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	k := Kind()
	gotCols, _ := json.Marshal(k.Table.Columns)
	wantCols, _ := json.Marshal(table.ColumnDefinitions)
	if !bytes.Equal(gotCols, wantCols) {
		t.Errorf("columns:\n got %s\nwant %s", gotCols, wantCols)
	}
	cells, err := k.Table.Cells(decode(t, "i-labels"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	gotCells, _ := json.Marshal(cells)
	wantCells, _ := json.Marshal(table.Rows[0].Cells)
	if !bytes.Equal(gotCells, wantCells) {
		t.Errorf("cells: got %s, want %s", gotCells, wantCells)
	}
}

func TestGeneration(t *testing.T) {
	old := decode(t, "a-minimal")
	if err := create(old); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		change func(*corev1.PodTemplate)
		want   int64
	}{
		{"template labels move it", func(p *corev1.PodTemplate) { p.Template.Labels = map[string]string{"app": "x"} }, 2},
		{"the image moves it", func(p *corev1.PodTemplate) { p.Template.Spec.Containers[0].Image = "nginx:1.28" }, 2},
		{"own labels do not", func(p *corev1.PodTemplate) { p.Labels = map[string]string{"own": "x"} }, 1},
		{"nothing changed", func(*corev1.PodTemplate) {}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pt := old.DeepCopy()
			tt.change(pt)
			strategy{}.PrepareForUpdate(pt, old)
			if pt.Generation != tt.want {
				t.Errorf("generation = %d, want %d", pt.Generation, tt.want)
			}
		})
	}
}

func TestPullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                       corev1.PullAlways,
		"nginx:latest":                corev1.PullAlways,
		"example.com:5000/x/y:latest": corev1.PullAlways,
		"nginx:1.27":                  corev1.PullIfNotPresent,
		"nginx@sha256:" + strings.Repeat("a", 64): corev1.PullIfNotPresent,
		"Nginx": corev1.PullIfNotPresent, // does not parse
		"":      corev1.PullIfNotPresent,
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("pullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}
