package cacher

import (
	"errors"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

func TestEventEncodings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		ev    func(v *version) *Event
		obj   string
		wire  string
		err   error
	}{
		{"added", `{"kind":"ConfigMap","metadata":{"name":"a"}}`, (*version).addedEvent,
			`{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}`,
			`{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}}` + "\n", nil},
		{"modified, empty metadata", `{"metadata":{}}`, (*version).modifiedEvent,
			`{"metadata":{"resourceVersion":"7"}}`,
			`{"type":"MODIFIED","object":{"metadata":{"resourceVersion":"7"}}}` + "\n", nil},
		{"deleted at the delete's revision", `{"metadata":{"name":"a"}}`,
			func(v *version) *Event { return newChange(9, v.kv.Key, nil, v).deletedEvent() },
			`{"metadata":{"name":"a","resourceVersion":"9"}}`,
			`{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"9"}}}` + "\n", nil},
		{"no metadata", `{"kind":"ConfigMap"}`, (*version).addedEvent, "", "", storage.ErrNoMetadata},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev(newVersion(storage.KeyValue{Key: "configmaps/ns/a", Value: []byte(tc.value), ModRevision: 7}))
			obj, err := ev.Object()
			if string(obj) != tc.obj || !errors.Is(err, tc.err) {
				t.Errorf("Object() = %s, %v; want %s, %v", obj, err, tc.obj, tc.err)
			}
			wire, err := ev.WireJSON()
			if string(wire) != tc.wire || !errors.Is(err, tc.err) {
				t.Errorf("WireJSON() = %q, %v; want %q, %v", wire, err, tc.wire, tc.err)
			}
			if kv := ev.KeyValue(); string(kv.Value) != tc.value || kv.ModRevision != ev.Revision {
				t.Errorf("KeyValue() = %s@%d, want the stored value at %d", kv.Value, kv.ModRevision, ev.Revision)
			}
		})
	}
	if kv := (&Event{Type: Bookmark, Revision: 3}).KeyValue(); kv.Key != "" || kv.Value != nil {
		t.Errorf("a bookmark's KeyValue is %+v, want none", kv)
	}
}
