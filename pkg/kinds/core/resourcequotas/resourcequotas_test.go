package resourcequotas

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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The files under testdata/want are what kube-apiserver v1.37.2 answered to a POST of the file of the
// same name under testdata/in (i-table: a GET as a Table of the quota in testdata/in/i-table.json, as
// kube-controller-manager had filled its status), recorded with the reference server
// (../shared/reference).

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// create runs this kind's part of a create: preparation and validation.
func create(q *corev1.ResourceQuota) error {
	s := strategy{}
	s.PrepareForCreate(q)
	if errs := s.Validate(q); len(errs) > 0 {
		return apierrors.NewInvalid(Kind().GroupVersionKind().GroupKind(), q.Name, errs)
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
		if name == "i-table" {
			continue // TestTableAsKube
		}
		t.Run(name, func(t *testing.T) {
			var q corev1.ResourceQuota
			readJSON(t, filepath.Join("testdata", "in", e.Name()), &q)
			var w map[string]json.RawMessage
			readJSON(t, filepath.Join("testdata", "want", e.Name()), &w)
			err := create(&q)
			if string(w["kind"]) == `"Status"` {
				var status apierrors.APIStatus
				if err == nil || !errors.As(err, &status) {
					t.Fatalf("create = %v, want kube's %s", err, w["message"])
				}
				var want metav1.Status
				readJSON(t, filepath.Join("testdata", "want", e.Name()), &want)
				// kube lists the causes in its validation's order; ours walk maps in the same
				// order only for one key, so compare them as sets.
				got := status.Status()
				if len(got.Details.Causes) != len(want.Details.Causes) || (len(want.Details.Causes) == 1 && got.Message != want.Message) {
					t.Errorf("message:\n got %s\nwant %s", got.Message, want.Message)
				}
				for _, c := range want.Details.Causes {
					if !containsCause(got.Details.Causes, c) {
						t.Errorf("missing cause %+v in %+v", c, got.Details.Causes)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got, _ := json.Marshal(struct {
				Spec   corev1.ResourceQuotaSpec   `json:"spec"`
				Status corev1.ResourceQuotaStatus `json:"status"`
			}{q.Spec, q.Status})
			wantJSON, _ := json.Marshal(map[string]json.RawMessage{"spec": w["spec"], "status": w["status"]})
			if !bytes.Equal(got, wantJSON) {
				t.Errorf("stored:\n got %s\nwant %s", got, wantJSON)
			}
		})
	}
}

func containsCause(causes []metav1.StatusCause, c metav1.StatusCause) bool {
	for _, x := range causes {
		if x == c {
			return true
		}
	}
	return false
}

func TestTableAsKube(t *testing.T) {
	var table metav1.Table
	readJSON(t, filepath.Join("testdata", "want", "i-table.json"), &table)
	var q corev1.ResourceQuota
	readJSON(t, filepath.Join("testdata", "in", "i-table.json"), &q)
	k := Kind()
	gotCols, _ := json.Marshal(k.Table.Columns)
	wantCols, _ := json.Marshal(table.ColumnDefinitions)
	if !bytes.Equal(gotCols, wantCols) {
		t.Errorf("columns:\n got %s\nwant %s", gotCols, wantCols)
	}
	cells, err := k.Table.Cells(&q, q.CreationTimestamp.Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := append(table.Rows[0].Cells[:3:3], "90s")
	gotCells, _ := json.Marshal(cells)
	wantCells, _ := json.Marshal(want)
	if !bytes.Equal(gotCells, wantCells) {
		t.Errorf("cells: got %s, want %s", gotCells, wantCells)
	}
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// TestUpdates covers what an update keeps and refuses: the spec's writes keep the status, status
// writes keep the spec (and the labels they carry, as kube's status strategy does), scopes are
// immutable and a status write needs a resourceVersion.
func TestUpdates(t *testing.T) {
	old := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns", ResourceVersion: "7", UID: "u", Labels: map[string]string{"a": "1"}},
		Spec:       corev1.ResourceQuotaSpec{Hard: quantities("pods", "2"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}},
		Status:     corev1.ResourceQuotaStatus{Hard: quantities("pods", "2"), Used: quantities("pods", "1")},
	}
	s := strategy{}
	tests := []struct {
		name   string
		change func(*corev1.ResourceQuota)
		status bool
		check  func(t *testing.T, stored *corev1.ResourceQuota)
		errs   string
	}{
		{name: "spec write keeps status", change: func(q *corev1.ResourceQuota) {
			q.Spec.Hard = quantities("pods", "3")
			q.Status = corev1.ResourceQuotaStatus{}
		}, check: func(t *testing.T, q *corev1.ResourceQuota) {
			if q.Status.Used.Pods().Value() != 1 || q.Spec.Hard.Pods().Value() != 3 {
				t.Errorf("stored %+v", q)
			}
		}},
		{name: "scopes are immutable", change: func(q *corev1.ResourceQuota) { q.Spec.Scopes = nil },
			errs: `spec.scopes: Invalid value: null: field is immutable`},
		{name: "status write keeps spec and takes labels", status: true, change: func(q *corev1.ResourceQuota) {
			q.Spec.Hard = quantities("pods", "9")
			q.Status.Used = quantities("pods", "0")
			q.Labels = map[string]string{"b": "2"}
		}, check: func(t *testing.T, q *corev1.ResourceQuota) {
			if q.Spec.Hard.Pods().Value() != 2 || q.Status.Used.Pods().Value() != 0 || q.Labels["b"] != "2" || q.UID != "u" {
				t.Errorf("stored %+v", q)
			}
		}},
		{name: "status write is validated", status: true, change: func(q *corev1.ResourceQuota) { q.Status.Used = quantities("pods", "-1") },
			errs: `status.used[pods]: Invalid value: "-1": must be greater than or equal to 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := old.DeepCopy()
			tt.change(q)
			var stored *corev1.ResourceQuota
			var err error
			if tt.status {
				stored = s.PrepareForStatusUpdate(q, old).(*corev1.ResourceQuota)
				err = s.ValidateStatusUpdate(stored, old).ToAggregate()
			} else {
				s.PrepareForUpdate(q, old)
				stored, err = q, s.ValidateUpdate(q, old).ToAggregate()
			}
			if tt.errs != "" {
				if err == nil || err.Error() != tt.errs {
					t.Fatalf("errors %v, want %s", err, tt.errs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, stored)
		})
	}
	q := old.DeepCopy()
	q.ResourceVersion = ""
	if err := s.ValidateStatusUpdate(q, old).ToAggregate(); err == nil || err.Error() != "resourceVersion: Required value" {
		t.Errorf("status write without a resourceVersion: %v", err)
	}
}

// TestWarningsOnCreate pins kube's warning, as kube-apiserver v1.37.2 sent it for requests.cpu 2 and
// limits.cpu 1.
func TestWarningsOnCreate(t *testing.T) {
	for _, tt := range []struct {
		hard corev1.ResourceList
		want []string
	}{
		{quantities("requests.cpu", "2", "limits.cpu", "1"), []string{"ResourceQuota requests.cpu (2) should be less than limits.cpu (1)"}},
		{quantities("memory", "2Gi", "limits.memory", "1Gi"), []string{"ResourceQuota memory (2Gi) should be less than limits.memory (1Gi)"}},
		{quantities("requests.storage", "1", "limits.storage", "2"), nil},
		{quantities("count/configmaps", "5"), nil},
	} {
		got := strategy{}.WarningsOnCreate(&corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: tt.hard}})
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%v: warnings %q, want %q", tt.hard, got, tt.want)
		}
	}
}
