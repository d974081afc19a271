package main

import (
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name, in, desired, want, err string
	}{
		{"v1 to v2", `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"},"spec":{"size":3,"color":"red"}}`, "example.com/v2",
			`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"},"spec":{"color":"red","replicas":3}}`, ""},
		{"v2 to v1", `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"},"spec":{"replicas":3}}`, "example.com/v1",
			`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"},"spec":{"size":3}}`, ""},
		{"no spec", `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"}}`, "example.com/v2",
			`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"}}`, ""},
		{"unknown version", `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a"}}`, "example.com/v3",
			"", "cannot convert example.com/v1 to example.com/v3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convert([]byte(tt.in), tt.desired)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Errorf("got %s, %v; want %s", out, err, tt.want)
			}
		})
	}
}
