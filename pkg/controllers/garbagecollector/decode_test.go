package garbagecollector

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecodeMeta(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *objectMeta
		wantErr  bool
	}{{
		name: "stored order, data after metadata never read",
		in:   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u1","managedFields":[{"manager":"x","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"} GARBAGE`,
		want: &objectMeta{Name: "a", Namespace: "ns", UID: "u1"},
	}, {
		name: "owners, finalizers and a deletion timestamp",
		in: `{"metadata":{"uid":"u1","name":"a","deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["orphan"],` +
			`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"o1","blockOwnerDeletion":true}]}}`,
		want: &objectMeta{Name: "a", UID: "u1", DeletionTimestamp: json.RawMessage(`"2026-01-01T00:00:00Z"`), Finalizers: []string{"orphan"},
			OwnerReferences: ownerRefsOf(`[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"o1","blockOwnerDeletion":true}]`)},
	}, {
		name: "escapes and white space go through the decoder",
		in:   "{ \"metadata\" : { \"name\" : \"a\\u0062\" , \"uid\" : \"u1\" } }",
		want: &objectMeta{Name: "ab", UID: "u1"},
	}, {
		name: "an escaped member name falls back to the whole decode",
		in:   `{"meta\u0064ata":{"name":"a","uid":"u1"}}`,
		want: &objectMeta{Name: "a", UID: "u1"},
	}, {
		name: "braces inside strings do not end the metadata",
		in:   `{"metadata":{"name":"a","annotations":{"x":"}{]["},"uid":"u1"}}`,
		want: &objectMeta{Name: "a", UID: "u1"},
	}, {
		name:    "no uid",
		in:      `{"metadata":{"name":"a"}}`,
		wantErr: true,
	}, {
		name:    "not JSON",
		in:      `{"metadata":`,
		wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeMeta([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decodeMeta = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decodeMeta = %+v, want %+v", got, tc.want)
			}
		})
	}
	if (&objectMeta{DeletionTimestamp: json.RawMessage("null")}).beingDeleted() {
		t.Error("a null deletionTimestamp counts as being deleted")
	}
}

func ownerRefsOf(s string) []metav1.OwnerReference {
	var refs []metav1.OwnerReference
	if err := json.Unmarshal([]byte(s), &refs); err != nil {
		panic(err)
	}
	return refs
}
