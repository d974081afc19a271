package admission

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// growingMapper knows kinds only after a Reset that follows their arrival, like a discovery-backed
// mapper and a CRD created after it read discovery.
type growingMapper struct {
	meta.RESTMapper
	arrived, known *meta.DefaultRESTMapper
	resets         int
}

func (m *growingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.known.RESTMapping(gk, versions...)
}

func (m *growingMapper) Reset() {
	m.resets++
	m.known = m.arrived
}

func TestResettingMapper(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	arrived := meta.NewDefaultRESTMapper(nil)
	arrived.Add(widget, meta.RESTScopeNamespace)
	inner := &growingMapper{arrived: arrived, known: meta.NewDefaultRESTMapper(nil)}
	now := time.Unix(1000, 0)
	m := newResettingMapper(inner, 5*time.Second)
	m.now = func() time.Time { return now }

	gone := schema.GroupKind{Group: "example.com", Kind: "Gone"}
	if _, err := m.RESTMapping(gone, "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("an unknown kind: got %v, want a no-match error", err)
	}
	if inner.resets != 1 {
		t.Fatalf("a miss reset the mapper %d times, want 1", inner.resets)
	}
	now = now.Add(time.Second)
	if _, err := m.RESTMapping(gone, "v1"); !meta.IsNoMatchError(err) || inner.resets != 1 {
		t.Fatalf("a second miss within the interval: err %v, %d resets; want a no-match error and no new reset", err, inner.resets)
	}
	now = now.Add(5 * time.Second)
	inner.known = meta.NewDefaultRESTMapper(nil) // forget again: only a reset brings Widget
	mapping, err := m.RESTMapping(widget.GroupKind(), "v1")
	if err != nil || inner.resets != 2 {
		t.Fatalf("a miss after the interval: err %v, %d resets; want the mapping after a second reset", err, inner.resets)
	}
	if mapping.Resource.Resource != "widgets" {
		t.Errorf("got resource %v, want widgets", mapping.Resource)
	}
}
