package flags

import (
	"strings"
	"testing"
)

// TestInsecureOffLoopback: the plain port leaves loopback only with the opt-in, which then warns.
func TestInsecureOffLoopback(t *testing.T) {
	tests := []struct {
		name        string
		address     string
		port        int
		allowRemote bool
		wantErr     string
		wantWarning bool
	}{
		{name: "loopback", address: "127.0.0.1", port: 8080},
		{name: "IPv6 loopback", address: "::1", port: 8080},
		{name: "every interface", address: "0.0.0.0", port: 8080,
			wantErr: "--insecure-bind-address 0.0.0.0 is not a loopback address: the plain port has no authentication, so anyone who reaches it controls the API; bind it to 127.0.0.1, turn it off with --insecure-port 0, or accept the risk with --insecure-port-allow-unauthenticated-remote-access"},
		{name: "a LAN address", address: "10.0.0.5", port: 8080, wantErr: "10.0.0.5 is not a loopback address"},
		{name: "opted in", address: "0.0.0.0", port: 8080, allowRemote: true, wantWarning: true},
		{name: "port off", address: "0.0.0.0", port: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewServerOptions()
			o.InsecureServing.BindAddress, o.InsecureServing.BindPort, o.InsecureServing.AllowRemote = tt.address, tt.port, tt.allowRemote
			var msgs []string
			for _, err := range o.InsecureServing.Validate() {
				msgs = append(msgs, err.Error())
			}
			got := strings.Join(msgs, "\n")
			if (tt.wantErr == "") != (got == "") || !strings.Contains(got, tt.wantErr) {
				t.Errorf("Validate() = %q, want %q", got, tt.wantErr)
			}
			if w := o.Warnings(); (len(w) == 1 && w[0].Flag == "insecure-bind-address") != tt.wantWarning || len(w) > 1 {
				t.Errorf("Warnings() = %v, want a warning: %v", w, tt.wantWarning)
			}
		})
	}
}
