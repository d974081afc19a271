package certs

import (
	"strings"
	"testing"
)

func TestServerURL(t *testing.T) {
	for _, tt := range []struct {
		addr string
		port int
		want string
	}{
		{"", 6443, "https://127.0.0.1:6443"},
		{"0.0.0.0", 6443, "https://127.0.0.1:6443"},
		{"10.0.0.5", 8443, "https://10.0.0.5:8443"},
		{"fd00::5", 6443, "https://[fd00::5]:6443"},
	} {
		if got := ServerURL(tt.addr, tt.port); got != tt.want {
			t.Errorf("ServerURL(%q, %d) = %q, want %q", tt.addr, tt.port, got, tt.want)
		}
	}
}

func TestCheckServerURL(t *testing.T) {
	for _, ok := range []string{"https://api.example.com:6443", "https://[::1]:6443", "https://10.0.0.5"} {
		if err := checkServerURL("server", ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"http://api.example.com":          "must be an https:// URL with a host",
		"api.example.com:6443":            "must be an https:// URL with a host",
		"https://":                        "must be an https:// URL with a host",
		"https://user:pw@api.example.com": "must not carry user information",
		"https://api.example.com/?x=1":    "must not carry user information, a query",
	} {
		if err := checkServerURL("server", bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
}
