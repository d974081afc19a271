package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// etcdPrefix is the --etcd-prefix the harness gives the server, so that it knows the keys of the
// server's objects.
const etcdPrefix = "/registry"

// server is a running `apictl serve`.
type server struct {
	proc        *process
	dataDir     string
	insecureURL string
	secureURL   string
	// readyURL is the /readyz the harness polls: on the insecure port for apictl, on the secure one
	// for the upstream server, which has no other.
	readyURL string
	// probe is a small client for readiness, seeding checks and /metrics, apart from the measured ones.
	probe *http.Client
}

// serverArgs are what every server the harness starts gets: loopback ports, its own data directory
// (and so its own PKI in <data-dir>/pki), and the harness's etcd when etcdURLs is not empty; then
// extra.
func serverArgs(dataDir string, insecurePort, securePort int, etcdURLs []string, extra ...string) []string {
	args := []string{"serve",
		"--data-dir", dataDir,
		"--bind-address", "127.0.0.1",
		"--insecure-port", strconv.Itoa(insecurePort),
		"--secure-port", strconv.Itoa(securePort),
		"--etcd-prefix", etcdPrefix,
	}
	if len(etcdURLs) > 0 {
		args = append(args, "--etcd-servers", strings.Join(etcdURLs, ","))
	}
	return append(args, extra...)
}

// portAttempts is how often startServer tries new ports when the ones it picked were taken meanwhile.
const portAttempts = 3

// startServer runs binary as `apictl serve` in dataDir, with extra flags after the harness's own, and
// waits until /readyz answers 200, polling every interval. It returns the server and the time from
// just before the process started until the first 200.
func startServer(ctx context.Context, binary, dataDir string, etcdURLs []string, interval time.Duration, extra ...string) (*server, time.Duration, error) {
	for attempt := 1; ; attempt++ {
		s, took, err := tryStartServer(ctx, binary, dataDir, etcdURLs, interval, extra)
		if err == nil || attempt == portAttempts || !errors.Is(err, errPortTaken) {
			return s, took, err
		}
		// The failed start may have written its PKI and etcd data: start again from nothing.
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, 0, fmt.Errorf("starting apictl serve: %w", err)
		}
	}
}

var errPortTaken = errors.New("a port was taken")

func tryStartServer(ctx context.Context, binary, dataDir string, etcdURLs []string, interval time.Duration, extra []string) (*server, time.Duration, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, 0, fmt.Errorf("starting apictl serve: %w", err)
	}
	s := &server{
		dataDir:     dataDir,
		insecureURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		secureURL:   "https://127.0.0.1:" + strconv.Itoa(ports[1]),
		readyURL:    "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/readyz",
		probe:       &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}, Timeout: 10 * time.Second},
	}
	began := time.Now()
	s.proc, err = startProcess("apictl serve", binary, serverArgs(dataDir, ports[0], ports[1], etcdURLs, extra...), filepath.Dir(dataDir))
	if err != nil {
		return nil, 0, err
	}
	took, err := s.waitReady(ctx, "apictl serve", began, interval)
	if err != nil {
		s.stop()
		if strings.Contains(s.proc.output.String(), "address already in use") {
			return nil, 0, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, 0, err
	}
	return s, took, nil
}

// waitReady polls /readyz every interval until it answers 200 and returns the time since began.
func (s *server) waitReady(ctx context.Context, name string, began time.Time, interval time.Duration) (time.Duration, error) {
	var took time.Duration
	err := s.proc.waitFor(ctx, name+" to be ready", interval, func(ctx context.Context) bool {
		if s.ready(ctx) {
			took = time.Since(began)
			return true
		}
		return false
	})
	return took, err
}

// ready asks the server's /readyz.
func (s *server) ready(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.readyURL, nil)
	if err != nil {
		return false
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		return false
	}
	drain(resp)
	return resp.StatusCode == http.StatusOK
}

// stop ends the server and releases the probe client's connections.
func (s *server) stop() error {
	err := s.proc.stop()
	s.probe.CloseIdleConnections()
	return err
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// newClient returns the HTTP client a measurement at concurrency uses, and the base URL it talks to.
// http/1.1 gets an idle connection per worker on the insecure port; h2+tls speaks HTTP/2 only (a
// server that does not negotiate it fails the request) with the admin client certificate, which
// `apictl serve` writes into <data-dir>/pki on its first start.
func (s *server) newClient(via Via, concurrency int) (*http.Client, string, error) {
	t := newTransport(concurrency)
	switch via {
	case ViaHTTP1:
		t.Protocols.SetHTTP1(true)
		return &http.Client{Transport: t}, s.insecureURL, nil
	case ViaHTTP2:
		tlsConfig, err := s.clientTLS(certs.NameAdmin)
		if err != nil {
			return nil, "", err
		}
		t.TLSClientConfig = tlsConfig
		t.Protocols.SetHTTP2(true)
		return &http.Client{Transport: t}, s.secureURL, nil
	default:
		return nil, "", fmt.Errorf("no HTTP client for %q", via)
	}
}

// target is newClient's client as an httpTarget, which checks that every answer comes over via's
// HTTP version. The caller closes its idle connections when done.
func (s *server) target(via Via, concurrency int) (httpTarget, error) {
	client, base, err := s.newClient(via, concurrency)
	if err != nil {
		return httpTarget{}, err
	}
	h := httpTarget{client: client, base: base, protoMajor: 1}
	if via == ViaHTTP2 {
		h.protoMajor = 2
	}
	return h, nil
}

// newCrowdClient returns a client for the secure port that stands for concurrency separate clients:
// HTTP/1.1 over TLS, so that each worker holds a connection of its own, presenting the client
// certificate called name in the server's PKI.
func (s *server) newCrowdClient(name string, concurrency int) (*http.Client, error) {
	tlsConfig, err := s.clientTLS(name)
	if err != nil {
		return nil, err
	}
	t := newTransport(concurrency)
	t.TLSClientConfig = tlsConfig
	t.Protocols.SetHTTP1(true)
	return &http.Client{Transport: t}, nil
}

// newTransport is the keep-alive transport of every measured client, with room for an idle
// connection per worker and no protocol chosen yet.
func newTransport(concurrency int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * concurrency,
		MaxIdleConnsPerHost: 2 * concurrency,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second,
		// Measure serving, not gzip: etcd's side has no compression either.
		DisableCompression: true,
		Protocols:          new(http.Protocols),
	}
}

// clientTLS trusts the server's CA and presents the client certificate called name from
// <data-dir>/pki.
func (s *server) clientTLS(name string) (*tls.Config, error) {
	pki := s.pkiDir()
	caPEM, err := os.ReadFile(certs.CertPath(pki, certs.NameCA))
	if err != nil {
		return nil, fmt.Errorf("reading the server's CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("reading the server's CA: no certificate in %s", certs.CertPath(pki, certs.NameCA))
	}
	cert, err := tls.LoadX509KeyPair(certs.CertPath(pki, name), certs.KeyPath(pki, name))
	if err != nil {
		return nil, fmt.Errorf("reading the client certificate %s: %w", name, err)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// pkiDir is where `apictl serve` keeps its certificates.
func (s *server) pkiDir() string { return filepath.Join(s.dataDir, "pki") }
