package customresources

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apictl/apictl/pkg/routes/model"
)

// TestGeneration pins apiextensions-apiserver's generation rule: a write moves it on when anything
// but metadata changed. With a status subresource, a write to the main resource keeps the stored
// status, so a status change there moves nothing; without one, status is content like any other.
func TestGeneration(t *testing.T) {
	widget := func(size, phase string, labels map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": "w", "namespace": "d", "generation": int64(3)}
		if labels != nil {
			meta["labels"] = labels
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": meta, "spec": map[string]any{"size": size}, "status": map[string]any{"phase": phase}}}
	}
	tests := []struct {
		name      string
		hasStatus bool
		obj       *unstructured.Unstructured
		want      int64
		wantPhase string
	}{
		{"labels only", true, widget("1", "Ready", map[string]any{"a": "b"}), 3, "Ready"},
		{"spec", true, widget("2", "Ready", nil), 4, "Ready"},
		{"status through the main resource, with a status subresource", true, widget("1", "Done", nil), 3, "Ready"},
		{"status, without a status subresource", false, widget("1", "Done", nil), 4, "Done"},
		{"nothing", false, widget("1", "Ready", nil), 3, "Ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := model.Resource{Plural: "widgets", Kind: "Widget", Namespaced: true, Custom: true}
			if tt.hasStatus {
				res.Subresources = []model.Subresource{{Name: "status"}}
			}
			s := Kind("example.com", "v1", res).Strategy
			s.PrepareForUpdate(tt.obj, widget("1", "Ready", nil))
			if got := tt.obj.GetGeneration(); got != tt.want {
				t.Errorf("generation %d, want %d", got, tt.want)
			}
			if phase, _, _ := unstructured.NestedString(tt.obj.Object, "status", "phase"); phase != tt.wantPhase {
				t.Errorf("status.phase %q, want %q", phase, tt.wantPhase)
			}
		})
	}
}
