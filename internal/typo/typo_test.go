package typo

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"secure-prot", "secure-port", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"same", "same", 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"secure-port", "insecure-port", "configmaps", "configmap-editors"}
	tests := []struct {
		s, want string
	}{
		{"secure-prot", "secure-port"},
		{"configmap", "configmaps"},
		{"confgimaps", "configmaps"},
		{"cm", ""},
		{"secrets", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Nearest(tt.s, names); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
