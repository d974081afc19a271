package app

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/testtool"
)

// The must-shows of `apictl certs init`, checked with the tools users check with.
func TestCertsInitSatisfiesOpenSSL(t *testing.T) {
	testtool.Tool(t, "openssl")
	chdirTemp(t)
	if code, _, stderr := run(t, false, "certs", "init", "--cert-dir", "D", "--hosts", "10.0.0.5,api.example.com"); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}
	out := testtool.Run(t, "openssl", "verify", "-CAfile", "D/ca.crt", "D/apiserver.crt", "D/admin.crt")
	if out != "D/apiserver.crt: OK\nD/admin.crt: OK\n" {
		t.Errorf("openssl verify:\n%s", out)
	}

	serving := testtool.Run(t, "openssl", "x509", "-in", "D/apiserver.crt", "-noout", "-text")
	wantSANs := []string{"DNS:localhost", "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
		"DNS:kubernetes.default.svc.cluster.local", "DNS:api.example.com", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1", "IP Address:10.0.0.5"}
	if host, err := os.Hostname(); err == nil && !strings.ContainsAny(host, "_ ") {
		wantSANs = append(wantSANs, "DNS:"+strings.ToLower(host))
	}
	for _, san := range wantSANs {
		if !strings.Contains(serving, san+",") && !strings.Contains(serving, san+"\n") {
			t.Errorf("serving certificate lacks SAN %s", san)
		}
	}
	if !strings.Contains(serving, "X509v3 Extended Key Usage: \n                TLS Web Server Authentication\n") {
		t.Errorf("serving certificate is not server auth only:\n%s", serving)
	}

	admin := testtool.Run(t, "openssl", "x509", "-in", "D/admin.crt", "-noout", "-subject", "-ext", "extendedKeyUsage")
	if !strings.Contains(admin, "O = system:masters") || !strings.Contains(admin, "CN = apictl-admin") || !strings.Contains(admin, "TLS Web Client Authentication") {
		t.Errorf("admin certificate:\n%s", admin)
	}
	for _, key := range []string{"D/ca.key", "D/apiserver.key", "D/admin.key", "D/admin.kubeconfig", "D/sa.key"} {
		info, err := os.Stat(key)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", key, info.Mode().Perm(), err)
		}
		if strings.HasSuffix(key, ".key") {
			testtool.Run(t, "openssl", "pkey", "-in", key, "-noout")
		}
	}

	// Again: nothing changes and the summary says so. A new host re-issues the serving certificate only.
	before := fingerprints(t, "D")
	code, stdout, _ := run(t, false, "certs", "init", "--cert-dir", "D", "--hosts", "10.0.0.5,api.example.com")
	if code != ExitOK || strings.Count(stdout, "\tkept\t") != 13 {
		t.Errorf("second run: exit %d:\n%s", code, stdout)
	}
	if after := fingerprints(t, "D"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("second run changed fingerprints:\n%v\n%v", before, after)
	}
	if code, _, stderr := run(t, false, "certs", "init", "--cert-dir", "D", "--hosts", "10.0.0.5,api.example.com,new.example.com"); code != ExitOK {
		t.Fatalf("third run: %s", stderr)
	}
	after := fingerprints(t, "D")
	for name, fp := range before {
		if changed := after[name] != fp; changed != (name == "apiserver.crt") {
			t.Errorf("%s changed: %v", name, changed)
		}
	}
}

// fingerprints are openssl's SHA-256 fingerprints of every certificate in dir.
func fingerprints(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"ca.crt", "apiserver.crt", "admin.crt"} {
		out[name] = testtool.Run(t, "openssl", "x509", "-in", filepath.Join(dir, name), "-noout", "-fingerprint", "-sha256")
	}
	return out
}

// The admin kubeconfig and the admin pair work against a TLS server that uses the serving pair and
// requires client certificates signed by the CA, as apictl serve will.
func TestCertsKubeconfigWorksWithCurlAndKubectl(t *testing.T) {
	curl := testtool.Tool(t, "curl")
	kubectl := testtool.Tool(t, "kubectl")
	chdirTemp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if code, _, stderr := run(t, false, "certs", "init", "--cert-dir", "D", "--secure-port", strconv.Itoa(port)); code != ExitOK {
		t.Fatalf("init: %s", stderr)
	}

	pair, err := tls.LoadX509KeyPair("D/apiserver.crt", "D/apiserver.key")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile("D/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(caPEM)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	url := fmt.Sprintf("https://127.0.0.1:%d/", port)

	out, err := exec.Command(curl, "--silent", "--show-error", "--fail", "--cacert", "D/ca.crt", "--cert", "D/admin.crt", "--key", "D/admin.key", url).CombinedOutput()
	if err != nil || string(out) != "hello apictl-admin\n" {
		t.Errorf("curl with the admin pair: %v\n%s", err, out)
	}
	if out, err := exec.Command(curl, "--silent", "--show-error", "--fail", "--cacert", "D/ca.crt", url).CombinedOutput(); err == nil {
		t.Errorf("curl without a client certificate got in: %s", out)
	}

	raw, err := exec.Command(kubectl, "--kubeconfig", "D/admin.kubeconfig", "config", "view", "--raw", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl config view --raw: %v\n%s", err, raw)
	}
	var cfg struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			Name string `json:"name"`
			User struct {
				Cert string `json:"client-certificate-data"`
				Key  string `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
		CurrentContext string `json:"current-context"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.Clusters) != 1 || len(cfg.Users) != 1 {
		t.Fatalf("kubectl config view: %v\n%s", err, raw)
	}
	adminPEM, _ := os.ReadFile("D/admin.crt")
	if decoded(t, cfg.Clusters[0].Cluster.CA) != string(caPEM) || decoded(t, cfg.Users[0].User.Cert) != string(adminPEM) ||
		cfg.Users[0].User.Key == "" || cfg.Clusters[0].Cluster.Server != url[:len(url)-1] || cfg.CurrentContext != "apictl-admin@apictl" {
		t.Errorf("kubectl sees %+v", cfg)
	}
	body, err := exec.Command(kubectl, "--kubeconfig", "D/admin.kubeconfig", "get", "--raw", "/").CombinedOutput()
	if err != nil || string(body) != "hello apictl-admin\n" {
		t.Errorf("kubectl get --raw / with the admin kubeconfig: %v\n%s", err, body)
	}
}

func decoded(t *testing.T, b64 string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
