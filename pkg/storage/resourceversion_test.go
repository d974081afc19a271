package storage

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestWithResourceVersion(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{name: "typed order: after name", in: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}`,
			want: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"42"},"data":{"k":"v"}}`},
		{name: "typed order: after uid, before creationTimestamp",
			in:   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u","creationTimestamp":"t","labels":{"uid":"x"}}}`,
			want: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u","resourceVersion":"42","creationTimestamp":"t","labels":{"uid":"x"}}}`},
		{name: "typed order: generateName first", in: `{"metadata":{"generateName":"g-","name":"g-1","generation":2}}`,
			want: `{"metadata":{"generateName":"g-","name":"g-1","resourceVersion":"42","generation":2}}`},
		{name: "sorted keys: before uid, after everything that sorts first",
			in:   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{"z":"}"},"creationTimestamp":"t","managedFields":[{"a":[1,{"b":"]"}]}],"name":"w","namespace":"d","uid":"u"},"spec":{}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"annotations":{"z":"}"},"creationTimestamp":"t","managedFields":[{"a":[1,{"b":"]"}]}],"name":"w","namespace":"d","resourceVersion":"42","uid":"u"},"spec":{}}`},
		{name: "sorted keys with nested values before metadata: last member",
			in:   `{"apiVersion":"example.com/v1","items":[{"a":"}"},[1,2]],"kind":"Widget","metadata":{"creationTimestamp":"t","name":"w"}}`,
			want: `{"apiVersion":"example.com/v1","items":[{"a":"}"},[1,2]],"kind":"Widget","metadata":{"creationTimestamp":"t","name":"w","resourceVersion":"42"}}`},
		{name: "empty metadata", in: `{"metadata":{}}`, want: `{"metadata":{"resourceVersion":"42"}}`},
		{name: "whitespace", in: " {\n \"a\" : 1 ,\n \"metadata\" : { } }", want: " {\n \"a\" : 1 ,\n \"metadata\" : {\"resourceVersion\":\"42\" } }"},
		{name: "escaped quotes in strings", in: `{"a":"x\"metadata\":{","metadata":{"name":"n"}}`,
			want: `{"a":"x\"metadata\":{","metadata":{"name":"n","resourceVersion":"42"}}`},
		{name: "whitespace between members", in: `{"metadata": { "name" : "n" , "creationTimestamp" : "t" } }`,
			want: `{"metadata": { "name" : "n" , "resourceVersion":"42","creationTimestamp" : "t" } }`},
		{name: "truncated metadata", in: `{"metadata":{"name":"n"`, err: true},
		{name: "nested metadata is not top-level", in: `{"spec":{"metadata":{}}}`, err: true},
		{name: "metadata not an object", in: `{"metadata":null}`, err: true},
		{name: "not an object", in: `[1]`, err: true},
		{name: "truncated", in: `{"kind":"ConfigMap","metad`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WithResourceVersion(nil, []byte(tt.in), 42)
			if tt.err {
				if err == nil {
					t.Errorf("want an error, got %s", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("result is not valid JSON: %s", got)
			}
			// The place recorded once gives the same bytes.
			kv := KeyValue{Value: []byte(tt.in), ModRevision: 42}.WithPlace()
			if kv.RVAt == 0 {
				t.Fatal("WithPlace recorded no place")
			}
			if again, err := AppendWithResourceVersion(nil, kv); err != nil || string(again) != tt.want {
				t.Errorf("with the recorded place: got %s, %v", again, err)
			}
			// And so do its parts, written one after another.
			head, member, tail, ok := kv.ResourceVersionParts(nil)
			if parts := string(head) + string(member) + string(tail); !ok || parts != tt.want {
				t.Errorf("in parts: got %s (%v)", parts, ok)
			}
			if cap(head) != len(head) {
				t.Errorf("head has room for %d more bytes, in the stored value", cap(head)-len(head))
			}
		})
	}
}

func BenchmarkWithResourceVersion(b *testing.B) {
	value := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app","namespace":"default","uid":"6b0f6f5e-8c1b-4c8e-9b8a-1b2c3d4e5f60","creationTimestamp":"2026-11-22T10:00:00Z"},"data":{"a":"1","b":"2"}}`)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = WithResourceVersion(buf[:0], value, 123456)
	}
}

func TestParseResourceVersion(t *testing.T) {
	tests := []struct {
		rv      string
		want    int64
		wantErr bool
	}{
		{rv: "42", want: 42},
		{rv: "0", wantErr: true},
		{rv: "-3", wantErr: true},
		{rv: "abc", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseResourceVersion(tt.rv)
		if tt.wantErr {
			var se *StorageError
			if !errors.As(err, &se) || se.Code != Invalid || !strings.Contains(err.Error(), `use a revision number from a previous response, "0" or none`) {
				t.Errorf("%q: error %v, want an Invalid StorageError saying what to send", tt.rv, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %d, %v; want %d", tt.rv, got, err, tt.want)
		}
	}
}
