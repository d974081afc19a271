package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/output"
)

// chainFile writes a leaf and its CA, both made from fixed keys, into one PEM file.
func chainFile(t *testing.T) (string, *KeyPair) {
	t.Helper()
	ca := mintCA(t, testKey(1), "apictl-ca", fixed.Add(-year), fixed.Add(9*year))
	leaf := mintLeaf(t, ca, testKey(2), leafTemplate{cn: "apictl-apiserver", eku: serverAuth,
		dns: []string{"localhost", "api.example.com"}, ips: []string{"127.0.0.1", "::1"},
		notBefore: fixed.Add(-day), notAfter: fixed.Add(348*day + time.Hour)})
	path := filepath.Join(t.TempDir(), "chain.pem")
	if err := os.WriteFile(path, append(leaf.CertPEM(), ca.CertPEM()...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, ca
}

func TestInspectFile(t *testing.T) {
	path, _ := chainFile(t)
	in, err := Inspect(context.Background(), path, InspectOptions{Now: fixed})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		format output.Format
	}{{"inspect/text.txt", FormatText}, {"inspect/json.txt", output.FormatJSON}} {
		var b bytes.Buffer
		if err := WriteInspection(&b, in, f.format); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, f.name, strings.ReplaceAll(b.String(), path, "<file>"))
	}
}

func TestInspectFileVerifiesAgainstCAFile(t *testing.T) {
	path, ca := chainFile(t)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Inspect(context.Background(), path, InspectOptions{Now: fixed, CAFile: caFile})
	if err != nil || in.Verified == nil || !*in.Verified || in.Verification != "ok, against "+caFile {
		t.Fatalf("verification against the right CA: %+v, %v", in, err)
	}
	other := mintCA(t, testKey(3), "other-ca", fixed.Add(-year), fixed.Add(year))
	if err := os.WriteFile(caFile, other.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err = Inspect(context.Background(), path, InspectOptions{Now: fixed, CAFile: caFile})
	if err != nil || in.Verified == nil || *in.Verified || !strings.HasPrefix(in.Verification, "failed against "+caFile) {
		t.Fatalf("verification against another CA: %+v, %v", in, err)
	}
}

func TestInspectEndpoint(t *testing.T) {
	dir := t.TempDir()
	report := initDir(t, dir, nil)
	pair, err := tls.LoadX509KeyPair(report.ServingCert, report.ServingKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(report.CACert)
	if err != nil {
		t.Fatal(err)
	}
	caBlock, _ := parseCertsPEM(ca)
	pair.Certificate = append(pair.Certificate, caBlock[0].Raw)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	in, err := Inspect(context.Background(), srv.URL, InspectOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if in.Subject != "CN=apictl-apiserver" || in.ChainLength != 2 || !strings.HasPrefix(in.Verification, "not checked") || in.Verified != nil {
		t.Errorf("inspection %+v", in)
	}
	in, err = Inspect(context.Background(), srv.URL, InspectOptions{Timeout: 5 * time.Second, CAFile: report.CACert})
	if err != nil || in.Verified == nil || !*in.Verified {
		t.Errorf("verified inspection %+v, %v", in, err)
	}
}

func TestInspectErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A server that accepts and never answers: the handshake must give up at the timeout.
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	missing := filepath.Join(t.TempDir(), "missing.crt")
	tests := []struct {
		target string
		opts   InspectOptions
		want   string
	}{
		{"https://" + ln.Addr().String(), InspectOptions{Timeout: 50 * time.Millisecond}, "no TLS handshake within --timeout 50ms"},
		{"https://127.0.0.1:1", InspectOptions{Timeout: time.Second}, "connecting to 127.0.0.1:1"},
		{"http://127.0.0.1:6443", InspectOptions{Timeout: time.Second}, "is not an https:// URL"},
		{"https://127.0.0.1:6443", InspectOptions{}, "--timeout 0s must be greater than zero"},
		{missing, InspectOptions{}, "reading " + missing + ": no such file or directory"},
		{missing, InspectOptions{CAFile: missing}, "reading --ca-file " + missing},
	}
	for _, tt := range tests {
		if _, err := Inspect(context.Background(), tt.target, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.target, err, tt.want)
		}
	}
}
