// Package servertest starts a complete `apictl serve` in-process for tests: the same options,
// validation, configuration and lifecycle as the command, on 127.0.0.1 port-0 listeners with a
// temporary data dir and a bootstrapped PKI. It is modelled on kube's StartTestServer.
package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apictl/apictl/pkg/apiserver"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve"
)

// EnvAuthorizationMode, when set, is the --authorization-mode of every test server whose test does not
// choose one.
const EnvAuthorizationMode = "APICTL_TEST_AUTHORIZATION_MODE"

// choosesAuthorization reports whether args set --authorization-mode.
func choosesAuthorization(args []string) bool {
	for _, a := range args {
		if a == "--authorization-mode" || strings.HasPrefix(a, "--authorization-mode=") {
			return true
		}
	}
	return false
}

// Server is a running test server.
type Server struct {
	// InsecureURL is http://127.0.0.1:<port>; SecureURL is https://127.0.0.1:<port>.
	InsecureURL, SecureURL string
	// DataDir and CertDir are the server's directories; CAFile is the CA to trust for SecureURL.
	DataDir, CertDir, CAFile string
	// AdminKubeconfig is the bootstrapped admin's kubeconfig (client certificate in system:masters).
	AdminKubeconfig string
	// AdminConfig is a client-go config for the admin over TLS.
	AdminConfig *rest.Config
	// Options are the options the server was built from.
	Options *flags.ServerOptions
	// Logs holds everything the server logged.
	Logs *Buffer

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// Start runs a server with the given `apictl serve` flags on top of the test defaults, waits until
// /readyz answers 200, and stops it when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := StartE(context.Background(), t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the test server: %v\nlogs:\n%s", err, s.Logs)
		}
	})
	return s
}

// StartE is Start without a testing.TB, for benchmarks and harnesses: dataDir must exist.
func StartE(ctx context.Context, dataDir string, args ...string) (*Server, error) {
	secureLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	insecureLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		secureLn.Close()
		return nil, err
	}
	closeListeners := func() { secureLn.Close(); insecureLn.Close() }

	o := flags.NewServerOptions()
	fss := o.Flags()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	defaults := []string{
		"--data-dir", dataDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", port(secureLn),
		"--insecure-port", port(insecureLn),
	}
	// A run can put every test server under another authorizer than the default, RBAC, without
	// touching each test; a test that chooses its own --authorization-mode keeps it (the flag adds to
	// a list when repeated).
	if mode := os.Getenv(EnvAuthorizationMode); mode != "" && !choosesAuthorization(args) {
		defaults = append(defaults, "--authorization-mode", mode)
	}
	if err := fs.Parse(append(defaults, args...)); err != nil {
		closeListeners()
		return nil, fmt.Errorf("parsing serve flags: %w", err)
	}
	// The pre-bound listeners serve unless the caller's flags turned a listener off or chose its
	// port (a test that restarts a server on the same address does).
	if o.SecureServing.BindPort == secureLn.Addr().(*net.TCPAddr).Port {
		o.SecureServing.Listener = secureLn
	} else {
		secureLn.Close()
	}
	if o.InsecureServing.BindPort == insecureLn.Addr().(*net.TCPAddr).Port {
		o.InsecureServing.Listener = insecureLn
	} else {
		insecureLn.Close()
	}
	if err := o.Complete(); err != nil {
		closeListeners()
		return nil, err
	}
	if errs := o.Validate(); len(errs) > 0 {
		closeListeners()
		return nil, fmt.Errorf("invalid serve flags: %w", errors.Join(errs...))
	}
	logs := &Buffer{}
	prepared, err := apiserver.New(ctx, o, logs, apiserver.Extras{
		Adjust:        func(cfg *serve.Config) { cfg.Notify = func(string) error { return nil } },
		UnsafeNoFsync: true,
	})
	if err != nil {
		closeListeners()
		return nil, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	s := &Server{
		InsecureURL:     fmt.Sprintf("http://127.0.0.1:%d", o.InsecureServing.BindPort),
		SecureURL:       fmt.Sprintf("https://127.0.0.1:%d", o.SecureServing.BindPort),
		DataDir:         o.Generic.DataDir,
		CertDir:         o.SecureServing.CertDir,
		CAFile:          filepath.Join(o.SecureServing.CertDir, "ca.crt"),
		AdminKubeconfig: filepath.Join(o.SecureServing.CertDir, "admin.kubeconfig"),
		Options:         o,
		Logs:            logs,
		cancel:          cancel,
		done:            make(chan error, 1),
	}
	go func() { s.done <- prepared.Run(runCtx) }()
	select {
	case <-prepared.Ready():
	case err := <-s.done:
		cancel()
		return nil, fmt.Errorf("the server stopped before it was ready: %w\nlogs:\n%s", err, logs)
	case <-time.After(30 * time.Second):
		checks := s.readyzVerbose()
		_ = s.Stop()
		return nil, fmt.Errorf("the server was not ready within 30s\n%s\nlogs:\n%s", checks, logs)
	}
	if _, err := os.Stat(s.AdminKubeconfig); err == nil {
		if s.AdminConfig, err = clientcmd.BuildConfigFromFlags("", s.AdminKubeconfig); err != nil {
			_ = s.Stop()
			return nil, fmt.Errorf("loading the admin kubeconfig: %w", err)
		}
	}
	return s, nil
}

func port(ln net.Listener) string {
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// Stop shuts the server down gracefully and returns what Run returned. It is safe to call twice.
func (s *Server) Stop() error {
	s.once.Do(func() {
		s.cancel()
		select {
		case s.err = <-s.done:
		case <-time.After(60 * time.Second):
			s.err = errors.New("the server did not stop within 60s")
		}
	})
	return s.err
}

// HTTPClient returns a client for SecureURL that trusts the server's CA and presents the admin's
// client certificate.
func (s *Server) HTTPClient() (*http.Client, error) {
	if s.AdminConfig == nil {
		return nil, errors.New("the server has no bootstrapped admin credentials")
	}
	rt, err := rest.TransportFor(s.AdminConfig)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt, Timeout: 30 * time.Second}, nil
}

// Buffer is a log sink safe for concurrent writes and reads.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

var _ io.Writer = (*Buffer)(nil)

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// readyzVerbose is the server's /readyz?verbose, which names the hooks and checks still failing: what
// a test that timed out waiting for readiness needs to say. It asks the insecure port, if there is one.
func (s *Server) readyzVerbose() string {
	if s.Options.InsecureServing.BindPort == 0 {
		return "(/readyz?verbose: no insecure port to ask)"
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(s.InsecureURL + "/readyz?verbose")
	if err != nil {
		return fmt.Sprintf("(/readyz?verbose: %v)", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return "/readyz?verbose:\n" + string(body)
}
