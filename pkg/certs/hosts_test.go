package certs

import (
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
		err      string
	}{
		{in: "10.0.0.5", want: "10.0.0.5"},
		{in: " 10.0.0.5 ", want: "10.0.0.5"},
		{in: "0:0:0:0:0:0:0:1", want: "::1"},
		{in: "FD00::5", want: "fd00::5"},
		{in: "::ffff:10.0.0.5", want: "10.0.0.5"},
		{in: "api.example.com", want: "api.example.com"},
		{in: "API.Example.COM", want: "api.example.com"},
		{in: "localhost", want: "localhost"},
		{in: "*.apps.example.com", want: "*.apps.example.com"},
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "999.1.1.1", err: "--hosts 999.1.1.1 looks like an IPv4 address but is not one"},
		{in: "10.0.0", err: "looks like an IPv4 address"},
		{in: "1.2.3.4.5", err: "looks like an IPv4 address"},
		{in: "bad_name!", err: "--hosts bad_name! is neither an IP address nor a valid DNS name"},
		{in: "-leading.example.com", err: "is neither an IP address nor a valid DNS name"},
		{in: "api.example.com.", err: "is neither an IP address nor a valid DNS name"},
		{in: "a.*.example.com", err: "is neither an IP address nor a valid DNS name"},
		{in: strings.Repeat("a", 250) + ".example.com", err: "is longer than a DNS name may be (253 characters)"},
		{in: "", err: "--hosts has an empty entry"},
		{in: "https://api.example.com", err: "is a URL"},
		{in: "10.0.0.0/8", err: "not networks or paths"},
		{in: "api.example.com:6443", err: "includes a port: give the host alone, like api.example.com"},
		{in: "[::1]:6443", err: "includes a port"},
		{in: "fd00::zz", err: "looks like an IPv6 address but is not one"},
	}
	for _, tt := range tests {
		got, err := normalizeHost("hosts", tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.err == "" && got != tt.want:
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one containing %q", tt.in, err, tt.err)
		}
	}
}

func TestNormalizeHostsReportsEveryProblemAndDropsDuplicates(t *testing.T) {
	got, err := normalizeHosts("etcd-hosts", []string{"a.example.com", "999.1.1.1", "A.example.com", "::1", "0::1", "x y"})
	if err == nil || !strings.Contains(err.Error(), "--etcd-hosts 999.1.1.1") || !strings.Contains(err.Error(), `--etcd-hosts "x y"`) {
		t.Errorf("error %v, want both bad entries named", err)
	}
	if strings.Join(got, ",") != "a.example.com,::1" {
		t.Errorf("hosts %v", got)
	}
}

func TestAdvertiseHost(t *testing.T) {
	for in, want := range map[string]string{"": "", "0.0.0.0": "", "::": "", "10.0.0.5": "10.0.0.5", "FD00:0::5": "fd00::5"} {
		if got, err := advertiseHost(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := advertiseHost("api.example.com"); err == nil || !strings.Contains(err.Error(), "--advertise-address api.example.com is not an IP address") {
		t.Errorf("a name as advertise address: %v", err)
	}
}
