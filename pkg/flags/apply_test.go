package flags

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestConfigBootstrapsPKI(t *testing.T) {
	o := NewServerOptions()
	o.Generic.DataDir = t.TempDir()
	o.SecureServing.BindAddress = "127.0.0.1"
	o.SecureServing.BindPort = freePort(t)
	o.InsecureServing.BindPort = freePort(t)
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if errs := o.Validate(); len(errs) != 0 {
		t.Fatal(errs)
	}
	cfg, err := o.Config(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pki := filepath.Join(o.Generic.DataDir, "pki")
	for _, f := range []string{"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.kubeconfig"} {
		if _, err := os.Stat(filepath.Join(pki, f)); err != nil {
			t.Errorf("bootstrap did not write %s: %v", f, err)
		}
	}
	defer cfg.SecureServing.Listener.Close()
	defer cfg.InsecureServing.Listener.Close()
	if cfg.SecureServing == nil || cfg.SecureServing.Address != net.JoinHostPort("127.0.0.1", strconv.Itoa(o.SecureServing.BindPort)) || cfg.SecureServing.ClientCA == nil {
		t.Fatalf("secure serving = %+v; the bootstrapped CA must verify client certificates", cfg.SecureServing)
	}
	if got := cfg.SecureServing.Cert.Current().IPAddresses; len(got) == 0 {
		t.Errorf("serving certificate without IP SANs")
	}
	if cfg.InsecureServing.Listener == nil {
		t.Errorf("the insecure listener was not bound")
	}
}

func TestConfigWithServingFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePair(t, dir, false)
	o := NewServerOptions()
	o.Generic.DataDir = dir
	o.SecureServing.CertFile, o.SecureServing.KeyFile = cert, key
	o.SecureServing.BindAddress = "127.0.0.1"
	o.SecureServing.BindPort = freePort(t)
	o.InsecureServing.BindPort = 0
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	cfg, err := o.Config(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.SecureServing.Listener.Close()
	if cfg.SecureServing.ClientCA != nil {
		t.Errorf("without --client-ca-file and without a bootstrapped CA, no client CA is trusted")
	}
	if cfg.InsecureServing != nil {
		t.Errorf("--insecure-port 0 must turn the listener off")
	}
	if _, err := os.Stat(filepath.Join(dir, "pki")); !os.IsNotExist(err) {
		t.Errorf("given serving files, nothing is bootstrapped: %v", err)
	}
}

func TestConfigPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	o := NewServerOptions()
	o.Generic.DataDir = t.TempDir()
	o.SecureServing.BindPort = 0
	o.InsecureServing.BindPort = taken.Addr().(*net.TCPAddr).Port
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	_, err = o.Config(context.Background(), io.Discard)
	want := fmt.Sprintf("--insecure-port %d on 127.0.0.1 is in use by another process: choose another with --insecure-port, or 0 to turn it off", taken.Addr().(*net.TCPAddr).Port)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
