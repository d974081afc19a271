package handlers

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

func TestJSONObjectEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`{}`, 2},
		{`{},"x":1}`, 2},
		{`{"a":{"b":[1,{"c":2}]}}, "rest"`, 23},
		{`{"a":"}"}x`, 9},
		{`{"a":"\"}"}x`, 11},
		{`{"a":"\\"}x`, 10},
		{`{"a":"{["}`, 10},
		{`{"a":1`, -1},
		{`[1]`, -1},
		{``, -1},
	} {
		if got := jsonObjectEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("jsonObjectEnd(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestStoredMetadataMatchesEncoding checks the fast path of PartialObjectMetadataList against the
// encoding of the decoded metadata: they must agree byte for byte.
func TestStoredMetadataMatchesEncoding(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	zero := int64(0)
	yes := true
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", UID: "u1", CreationTimestamp: now}},
		{
			ObjectMeta: metav1.ObjectMeta{
				Name: "full", GenerateName: "fu", Namespace: "ns", UID: "u2", Generation: 3, CreationTimestamp: now,
				DeletionTimestamp: &now, DeletionGracePeriodSeconds: &zero,
				Labels:      map[string]string{"b": "2", "a": "1"},
				Annotations: map[string]string{"q": `a "quoted" } value {`, "path\\x": "\u00e9\u2028"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "ou",
					Controller: &yes, BlockOwnerDeletion: &yes}},
				Finalizers: []string{"x/y", "foregroundDeletion"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &now, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:k":{}}}`)}},
			},
			Data: map[string]string{"k": "} {\"metadata\":"},
		},
	} {
		cm.TypeMeta = metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}
		value, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		kv := storage.KeyValue{Key: "/registry/configmaps/ns/" + cm.Name, Value: value, ModRevision: 42}
		withRV, err := storage.AppendWithResourceVersion(nil, kv)
		if err != nil {
			t.Fatal(err)
		}
		fast, ok := storedMetadata(withRV, []byte(`{"kind":"ConfigMap","apiVersion":"v1",`))
		if !ok {
			t.Fatalf("%s: no metadata found in %s", cm.Name, withRV)
		}
		p, err := partialMetadata(kv, "v1")
		if err != nil {
			t.Fatal(err)
		}
		slow, err := json.Marshal(&p.ObjectMeta)
		if err != nil {
			t.Fatal(err)
		}
		if string(fast) != string(slow) {
			t.Errorf("%s:\nfast %s\nslow %s", cm.Name, fast, slow)
		}
	}
	if _, ok := storedMetadata([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`), []byte(`{"kind":"ConfigMap","apiVersion":"v1",`)); ok {
		t.Error("a value in another key order took the fast path")
	}
}
