package webhooktest

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeWithNewCertificates serves over HTTPS with minted certificates: a client that trusts the
// CA reaches the handler by IP and by the extra DNS name, the URL line carries the path, and ending
// the context ends Serve without an error.
func TestServeWithNewCertificates(t *testing.T) {
	certs, err := NewCertificates("test", "hooks.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certs.TLS()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, "127.0.0.1:0", cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "hello "+r.URL.Path)
		}), pw, "/hook")
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "https://127.0.0.1:") || !strings.HasSuffix(url, "/hook") {
		t.Fatalf("URL line %q", line)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs.CA)
	for _, serverName := range []string{"", "hooks.ns.svc", "localhost"} {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("server name %q: %v", serverName, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello /hook" {
			t.Errorf("server name %q: body %q", serverName, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// TestMainExitCodes: 2 for flags that do not parse or do not validate, 1 for a failed run, 0 for a
// run that ends with its context.
func TestMainExitCodes(t *testing.T) {
	ok := func() error { return nil }
	tests := []struct {
		name     string
		args     []string
		validate func() error
		run      func(context.Context) error
		want     int
		stderr   string
	}{
		{name: "unknown flag", args: []string{"--nope"}, validate: ok, run: func(context.Context) error { return nil }, want: 2, stderr: "flag provided but not defined"},
		{name: "invalid flags", validate: func() error { return errors.New("--x is required") }, run: func(context.Context) error { return nil }, want: 2, stderr: "hook: --x is required"},
		{name: "failed run", validate: ok, run: func(context.Context) error { return errors.New("boom") }, want: 1, stderr: "hook: boom"},
		{name: "canceled run", validate: ok, run: func(context.Context) error { return context.Canceled }, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			fs := flag.NewFlagSet("hook", flag.ContinueOnError)
			var f Flags
			f.AddFlags(fs, "certificate")
			if got := Main("hook", fs, tt.args, &stderr, tt.validate, tt.run); got != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) || (tt.stderr == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
		})
	}
}
