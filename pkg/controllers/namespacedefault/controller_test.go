package namespacedefault

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

func nsKV(t *testing.T, name string, phase corev1.NamespacePhase) storage.KeyValue {
	t.Helper()
	data, err := json.Marshal(corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}})
	if err != nil {
		t.Fatal(err)
	}
	return storage.KeyValue{Key: "namespaces/" + name, Value: data}
}

// TestReconcileTriggers drives the controller's event handlers and one round of work at a time:
// which namespaces get reconciled, with which current object.
func TestReconcileTriggers(t *testing.T) {
	type call struct {
		ns      string
		present bool
	}
	var calls []call
	fail := map[string]bool{}
	c := New(Config{Resource: "serviceaccounts", Name: "default", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Reconcile: func(_ context.Context, ns string, current []byte) error {
			calls = append(calls, call{ns, current != nil})
			if fail[ns] {
				return errors.New("boom")
			}
			return nil
		}})
	round := func() ([]call, bool) {
		calls = nil
		failed := c.work(context.Background())
		slices.SortFunc(calls, func(a, b call) int {
			if a.ns < b.ns {
				return -1
			}
			return 1
		})
		return calls, failed
	}
	sa := func(ns, name string) storage.KeyValue {
		return storage.KeyValue{Key: "serviceaccounts/" + ns + "/" + name, Value: []byte(`{}`)}
	}

	c.onNamespaces(true, []storage.KeyValue{nsKV(t, "a", corev1.NamespaceActive), nsKV(t, "gone", corev1.NamespaceTerminating)}, false)
	c.onObjects(true, []storage.KeyValue{sa("a", "default"), sa("a", "other")}, false)
	if got, _ := round(); !slices.Equal(got, []call{{"a", true}}) {
		t.Errorf("after the lists: %v, want only the active namespace, with its object", got)
	}
	c.onObjects(false, []storage.KeyValue{sa("a", "other")}, true)
	if got, _ := round(); len(got) != 0 {
		t.Errorf("another object's delete reconciled %v", got)
	}
	c.onObjects(false, []storage.KeyValue{sa("a", "default")}, true)
	if got, _ := round(); !slices.Equal(got, []call{{"a", false}}) {
		t.Errorf("after the delete: %v", got)
	}
	c.onNamespaces(false, []storage.KeyValue{nsKV(t, "b", corev1.NamespaceActive)}, false)
	fail["b"] = true
	if got, failed := round(); !slices.Equal(got, []call{{"b", false}}) || !failed {
		t.Errorf("new namespace: %v failed=%v", got, failed)
	}
	fail["b"] = false
	if got, failed := round(); !slices.Equal(got, []call{{"b", false}}) || failed {
		t.Errorf("a failed namespace is tried again: %v failed=%v", got, failed)
	}
	c.onNamespaces(false, []storage.KeyValue{nsKV(t, "b", corev1.NamespaceTerminating)}, false)
	c.onObjects(false, []storage.KeyValue{sa("b", "default")}, true)
	if got, _ := round(); len(got) != 0 {
		t.Errorf("a terminating namespace was reconciled: %v", got)
	}
}
