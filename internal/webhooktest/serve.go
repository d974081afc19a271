// Package webhooktest is what apictl's test webhooks (test/admissionwebhook, test/conversionwebhook)
// and the tests that run them share: the programs' command line and HTTPS serving until a signal,
// test certificates minted on the spot, and starting a built webhook program from a test. Test
// support only.
package webhooktest

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Flags are the serving flags every test webhook has.
type Flags struct {
	Listen   string
	CertFile string
	KeyFile  string
}

// AddFlags registers --listen, --tls-cert-file and --tls-private-key-file on fs; certHelp describes
// --tls-cert-file.
func (f *Flags) AddFlags(fs *flag.FlagSet, certHelp string) {
	fs.StringVar(&f.Listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&f.CertFile, "tls-cert-file", "", certHelp)
	fs.StringVar(&f.KeyFile, "tls-private-key-file", "", "key of --tls-cert-file (PEM)")
}

// LoadCertificate loads the serving pair the flags name.
func (f *Flags) LoadCertificate() (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the serving certificate: %w", err)
	}
	return cert, nil
}

// Main is a test webhook's command: it parses args with fs (whose output goes to stderr), checks
// them with validate, and calls run with a context that SIGTERM or SIGINT cancels. Its exit code is
// 0 when run ends with the signal, 1 when run fails, 2 on bad flags; the errors are written to stderr
// after name.
func Main(name string, fs *flag.FlagSet, args []string, stderr io.Writer, validate func() error, run func(context.Context) error) int {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// Serve listens on addr and serves h over HTTPS with cert until ctx ends, then shuts the server
// down (in-flight requests get 5 s). Once it serves it prints https://HOST:PORT followed by path on
// stdout, the line tests wait for.
func Serve(ctx context.Context, addr string, cert tls.Certificate, h http.Handler, stdout io.Writer, path string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	fmt.Fprintf(stdout, "https://%s%s\n", ln.Addr(), path)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
