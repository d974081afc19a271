package bench

import (
	"context"
	"crypto/tls"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// The peer comparison (issue 17): apictl and the upstream apiextensions-apiserver, built from the
// version of k8s.io/apiextensions-apiserver in go.mod, side by side on the harness's etcd (each
// under an --etcd-prefix of its own), serving the same CRD with the same objects to the same client
// (HTTP/2 over TLS, apictl's admin certificate, in system:masters on both), measured alternately.
const (
	// upstreamEtcdPrefix keeps the upstream server's keys apart from apictl's (etcdPrefix).
	upstreamEtcdPrefix = "/upstream"
	// PeerObjects is how many custom objects both servers hold when their memory is read.
	PeerObjects = 11000
	// peerToken is the bearer token the core API stub accepts; the measured client does not use it.
	peerToken = "bench-peer-token"
	// upstreamReadyTimeout bounds the wait for the upstream server's /readyz.
	upstreamReadyTimeout = 2 * time.Minute
)

// Peer is the outcome of the peer comparison.
type Peer struct {
	// Upstream names the upstream server's module and version, as its binary records them; or, in
	// the before comparison, the earlier apictl.
	Upstream string `json:"upstream"`
	// Other is what the other side is called in the report: "upstream", or "before" in the before
	// comparison, whose numbers the Upstream fields hold.
	Other string `json:"other,omitempty"`
	// Encodings says, for the before comparison, how each side answered a LIST asking for gzip.
	Encodings []string `json:"encodings,omitempty"`
	// Client describes the measured client, the same for both servers.
	Client string `json:"client"`
	// Objects is what GET reads and LIST returns: the seeded custom objects of one CRD.
	Objects string       `json:"objects"`
	Listed  int          `json:"listed"`
	Results []PeerResult `json:"results"`
	// Features says what the servers ran for FeaturesResults, the same rows measured again with
	// features on (Config.Features); empty when they were not.
	Features        string       `json:"features,omitempty"`
	FeaturesResults []PeerResult `json:"featuresResults,omitempty"`
	// ReadyEmpty is each server's time from process start to /readyz 200 on the harness's etcd with
	// nothing stored under its prefix; ReadyLoaded the same on a restart with MemoryObjects stored.
	ReadyEmpty  PeerPair `json:"readyEmpty"`
	ReadyLoaded PeerPair `json:"readyLoaded"`
	// MemoryObjects is how many custom objects each server holds (and has listed once, so that both
	// have them cached) when its resident set, RSS, is read, after two collections and Config.Settle.
	MemoryObjects int      `json:"memoryObjects"`
	RSS           PeerPair `json:"rss"`
	// RSSAnon and RSSFile divide RSS into anonymous memory (heap, stacks) and file pages mapped (the
	// binary's code and data that have been touched), which a server's dependencies set.
	RSSAnon PeerPair `json:"rssAnon"`
	RSSFile PeerPair `json:"rssFile"`
	// StubAsked lists what the upstream server asked of the core API stub, for the report's reader
	// to see that it stayed off the measured path.
	StubAsked []string `json:"stubAsked"`
}

// PeerPair is one number for each server: a duration in nanoseconds or a size in bytes.
type PeerPair struct {
	Upstream int64 `json:"upstream"`
	Apictl   int64 `json:"apictl"`
}

// Ratio is apictl's number divided by upstream's, 0 if upstream's is 0.
func (p PeerPair) Ratio() float64 {
	if p.Upstream == 0 {
		return 0
	}
	return float64(p.Apictl) / float64(p.Upstream)
}

// PeerRounds is how often each operation is measured on each server, alternately: each side keeps
// its best round. On a shared machine noise only ever slows a measurement down (single rounds of
// one row differed by up to 30%), so the best is the fairest.
const PeerRounds = 2

// PeerResult is one operation at one concurrency on both servers: each side's best of Rounds.
type PeerResult struct {
	Operation   Operation `json:"operation"`
	Concurrency int       `json:"concurrency"`
	Rounds      int       `json:"rounds"`
	Upstream    PeerSide  `json:"upstream"`
	Apictl      PeerSide  `json:"apictl"`
}

// Ratio is apictl's throughput divided by upstream's, 0 if upstream's is 0.
func (r PeerResult) Ratio() float64 {
	if r.Upstream.PerSecond == 0 {
		return 0
	}
	return r.Apictl.PerSecond / r.Upstream.PerSecond
}

// PeerSide is one server's measurement.
type PeerSide struct {
	PerSecond float64       `json:"perSecond"`
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	// CPUPerRequest is the server process's CPU time (user and system, from /proc) over the whole
	// measurement, warm-up included, divided by every request sent in it.
	CPUPerRequest time.Duration `json:"cpuPerRequest"`
	// EtcdCPUPerRequest and ClientCPUPerRequest are the same for the harness's etcd process and for
	// the harness itself (its clients; the core API stub beside them idles once the servers have
	// started). The three share the machine's CPUs, so they show where a row's time went.
	EtcdCPUPerRequest   time.Duration `json:"etcdCpuPerRequest"`
	ClientCPUPerRequest time.Duration `json:"clientCpuPerRequest"`
	// Busy is the share of the machine's CPUs the three used over the measurement.
	Busy       float64 `json:"busy"`
	Failed     int     `json:"failed"`
	FirstError string  `json:"firstError,omitempty"`
}

// best keeps the faster of two rounds, with the failures of both: a failed request in any round
// fails the run.
func (ps PeerSide) best(round PeerSide) PeerSide {
	failed, firstError := ps.Failed+round.Failed, ps.FirstError
	if firstError == "" {
		firstError = round.FirstError
	}
	if round.PerSecond > ps.PerSecond {
		ps = round
	}
	ps.Failed, ps.FirstError = failed, firstError
	return ps
}

// peerSide pairs a running server with how to start it again on the same data.
type peerSide struct {
	name string
	s    *server
	// start starts the server on its data, with extra flags if any.
	start func(ctx context.Context, extra ...string) (*server, time.Duration, error)
}

// customKind is the kind the peer comparison works on: custom objects of the scale measurement's
// CRD, about 500 bytes each as served.
func customKind() objectKind {
	r := scaleResourceOf(ScaleCustom)
	return objectKind{collection: r.collection, object: record}
}

// comparePeer runs the peer comparison in dir.
func comparePeer(ctx context.Context, cfg Config, dir string) (_ *Peer, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("preparing the peer comparison: %w", err)
	}
	p := &Peer{
		Upstream: upstreamVersion(cfg.Upstream),
		Client:   "h2+tls, apictl's admin client certificate (O=system:masters) on both, one client per concurrency",
		Objects:  "custom objects of " + scaleCRDName,
		Listed:   cfg.ListObjects,
	}
	etcd, err := startEtcd(ctx, cfg.Etcd, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, etcd.proc.stop()) }()

	// apictl starts first: its PKI, written on its first start, serves both (and the stub), so that
	// one CA and one client certificate fit both servers. Writing it is no part of starting as the
	// upstream server does (it is given its certificates), so the start that is timed is the second.
	apictlDir := filepath.Join(dir, "apictl")
	apictl := &peerSide{name: "apictl", start: func(ctx context.Context, extra ...string) (*server, time.Duration, error) {
		return startServer(ctx, cfg.Apictl, apictlDir, etcd.urls, readyPollInterval, extra...)
	}}
	first, _, err := apictl.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting apictl: %w", err)
	}
	if err := first.stop(); err != nil {
		return nil, err
	}
	if apictl.s, err = startSide(ctx, cfg, apictl, &p.ReadyEmpty.Apictl); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, apictl.s.stop()) }()

	pki := apictl.s.pkiDir()
	cert, err := tls.LoadX509KeyPair(certs.CertPath(pki, certs.NameAPIServer), certs.KeyPath(pki, certs.NameAPIServer))
	if err != nil {
		return nil, fmt.Errorf("reading apictl's serving certificate for the core API stub: %w", err)
	}
	stub, err := startCoreStub(cert, peerToken, []string{"default", "kube-system", listNamespace, writeNamespace, memoryNamespace})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stub.stop()) }()
	kubeconfig := filepath.Join(dir, "core-stub.kubeconfig")
	if err := os.WriteFile(kubeconfig, stubKubeconfig(stub.url, certs.CertPath(pki, certs.NameCA), peerToken), 0o600); err != nil {
		return nil, fmt.Errorf("writing the core API stub's kubeconfig: %w", err)
	}
	upstream := &peerSide{name: "upstream", start: func(ctx context.Context, extra ...string) (*server, time.Duration, error) {
		return startUpstream(ctx, cfg.Upstream, filepath.Join(dir, "upstream"), apictlDir, append(upstreamArgs(etcd.urls, pki, kubeconfig), extra...))
	}}
	if upstream.s, err = startSide(ctx, cfg, upstream, &p.ReadyEmpty.Upstream); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, upstream.s.stop()) }()
	sides := []*peerSide{upstream, apictl}

	kind := customKind()
	for _, side := range sides {
		cfg.Logger.Info("seeding", "server", side.name, "objects", cfg.ListObjects)
		if err := seedPeer(ctx, cfg, side, kind); err != nil {
			return nil, err
		}
	}
	admin := func(s *server, c int) (httpTarget, error) { return s.target(ViaHTTP2, c) }
	if p.Results, err = measurePeerRows(ctx, cfg, sides, etcd.proc, kind, admin, "peer", ServerOperations()); err != nil {
		return nil, err
	}
	if cfg.Features {
		if p.FeaturesResults, err = comparePeerFeatures(ctx, cfg, dir, sides, etcd.proc, kind, stub); err != nil {
			return nil, err
		}
		p.Features = peerFeaturesOn
	}
	if err := peerMemory(ctx, cfg, sides, kind, p); err != nil {
		return nil, err
	}
	p.StubAsked = stub.asked()
	return p, nil
}

// measurePeerRows measures every operation at every concurrency on both sides, with the clients
// target gives, alternately, and keeps each side's best of PeerRounds rounds. Creates are named
// after label.
func measurePeerRows(ctx context.Context, cfg Config, sides []*peerSide, etcd *process, kind objectKind,
	target func(s *server, c int) (httpTarget, error), label string, ops []Operation) ([]PeerResult, error) {
	var results []PeerResult
	w := window{Warmup: cfg.Warmup, Duration: cfg.Duration}
	turn := 0
	for _, c := range cfg.Concurrency {
		targets := make([]httpTarget, len(sides))
		for i, side := range sides {
			h, err := target(side.s, c)
			if err != nil {
				return nil, err
			}
			defer h.client.CloseIdleConnections()
			targets[i] = h
		}
		for _, o := range ops {
			if !cfg.measures(o) {
				continue
			}
			r := PeerResult{Operation: o, Concurrency: c, Rounds: PeerRounds}
			for round := range PeerRounds {
				// Alternate who goes first, so that neither always meets the machine as the other left it.
				for _, i := range peerOrder(turn) {
					side := sides[i]
					cfg.Logger.Info("measuring", "server", side.name, "operation", o, "concurrency", c, "round", round+1, "label", label)
					// Each round's creates need names of their own.
					names := label + "-c" + strconv.Itoa(c) + "-r" + strconv.Itoa(round)
					ps, err := measurePeer(ctx, side.s, etcd, serverWorkers(targets[i], kind, names)[o], c, w)
					if err != nil {
						return nil, fmt.Errorf("%s on %s at concurrency %d: %w", o, side.name, c, err)
					}
					if side.name == "apictl" {
						r.Apictl = r.Apictl.best(ps)
					} else {
						r.Upstream = r.Upstream.best(ps)
					}
				}
				turn++
			}
			results = append(results, r)
		}
	}
	return results, nil
}

// peerOrder is the order of the two sides (0 upstream, 1 apictl) at the turn-th measurement.
func peerOrder(turn int) []int {
	if turn%2 == 0 {
		return []int{0, 1}
	}
	return []int{1, 0}
}

// startSide starts side's server and records its time to ready in *ready.
func startSide(ctx context.Context, cfg Config, side *peerSide, ready *int64) (*server, error) {
	s, took, err := side.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", side.name, err)
	}
	cfg.Logger.Info("server ready", "server", side.name, "after", took)
	*ready = int64(took)
	return s, nil
}

// seedPeer makes the CRD served on side's server and stores the listed objects and one object per
// update worker, then checks that both kinds of LIST return the listed ones.
func seedPeer(ctx context.Context, cfg Config, side *peerSide, kind objectKind) error {
	h, err := side.s.target(ViaHTTP2, seedConcurrency)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	if err := installScaleCRD(ctx, h); err != nil {
		return fmt.Errorf("%s: %w", side.name, err)
	}
	if side.name == "apictl" {
		// The upstream server has no namespaces of its own: the stub serves them.
		for _, ns := range []string{listNamespace, writeNamespace, memoryNamespace} {
			if err := createNamespace(ctx, h, ns); err != nil {
				return err
			}
		}
	}
	// A CRD just Established may take a moment to be served by every path of the server.
	if err := waitServed(ctx, h, kind.collection(listNamespace)); err != nil {
		return fmt.Errorf("%s: %w", side.name, err)
	}
	if err := createObjects(ctx, h, kind, listNamespace, cfg.ListObjects, listName); err != nil {
		return fmt.Errorf("%s: %w", side.name, err)
	}
	if err := createObjects(ctx, h, kind, writeNamespace, cfg.maxConcurrency(), updateName); err != nil {
		return fmt.Errorf("%s: %w", side.name, err)
	}
	for _, query := range []string{"", "?resourceVersion=0"} {
		if err := waitListed(ctx, h, kind.collection(listNamespace)+query, cfg.ListObjects); err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
	}
	return nil
}

// waitServed waits until a LIST of path answers 200.
func waitServed(ctx context.Context, h httpTarget, path string) error {
	return retry(ctx, "waiting for "+path+" to be served", func(ctx context.Context) error {
		return h.do(ctx, http.MethodGet, path, nil, http.StatusOK, nil)
	})
}

// waitListed waits until a LIST of path returns the want listed objects, which one served from a
// cache that follows etcd may take a moment to.
func waitListed(ctx context.Context, h httpTarget, path string, want int) error {
	deadline := time.Now().Add(listSettleTimeout)
	for {
		_, err := checkListed(ctx, h, path, want)
		if ce := (*listedCountError)(nil); err == nil || !errors.As(err, &ce) || time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// measurePeer measures one operation on s and the CPU time s, etcd and the harness used meanwhile.
func measurePeer(ctx context.Context, s *server, etcd *process, prepare newWorker, c int, w window) (PeerSide, error) {
	before, err := peerCPU(s, etcd)
	if err != nil {
		return PeerSide{}, err
	}
	begin := time.Now()
	t, err := measure(ctx, c, w, prepare)
	if err != nil {
		return PeerSide{}, err
	}
	wall := time.Since(begin)
	after, err := peerCPU(s, etcd)
	if err != nil {
		return PeerSide{}, err
	}
	ps := PeerSide{PerSecond: t.PerSecond(), P50: t.Percentile(50), P99: t.Percentile(99), Failed: t.Failed}
	if t.Issued > 0 {
		n := time.Duration(t.Issued)
		ps.CPUPerRequest = (after[0] - before[0]) / n
		ps.EtcdCPUPerRequest = (after[1] - before[1]) / n
		ps.ClientCPUPerRequest = (after[2] - before[2]) / n
	}
	if wall > 0 {
		used := (after[0] - before[0]) + (after[1] - before[1]) + (after[2] - before[2])
		ps.Busy = float64(used) / (float64(wall) * float64(runtime.NumCPU()))
	}
	if t.FirstError != nil {
		ps.FirstError = t.FirstError.Error()
	}
	return ps, nil
}

// peerCPU reads the CPU time used so far by s, by etcd and by the harness itself.
func peerCPU(s *server, etcd *process) ([3]time.Duration, error) {
	var cpu [3]time.Duration
	var err error
	if cpu[0], err = s.proc.cpuTime(); err != nil {
		return cpu, err
	}
	if cpu[1], err = etcd.cpuTime(); err != nil {
		return cpu, err
	}
	cpu[2], err = procCPUTime("/proc/self/stat", "the harness")
	return cpu, err
}

// peerMemory brings both servers to PeerObjects custom objects (the measurements' writes removed,
// the rest added), restarts them one after the other on that data, timing each to ready, has each
// list every object once, so that both hold them in their caches, and reads their resident sets.
func peerMemory(ctx context.Context, cfg Config, sides []*peerSide, kind objectKind, p *Peer) error {
	extra := max(PeerObjects-cfg.ListObjects, 0)
	p.MemoryObjects = cfg.ListObjects + extra
	for _, side := range sides {
		h, err := side.s.target(ViaHTTP2, seedConcurrency)
		if err != nil {
			return err
		}
		cfg.Logger.Info("storing objects for the memory measurement", "server", side.name, "objects", extra)
		err = h.do(ctx, http.MethodDelete, kind.collection(writeNamespace), nil, http.StatusOK, nil)
		if err == nil {
			err = createObjects(ctx, h, kind, memoryNamespace, extra, func(i int) string { return "memory-" + strconv.Itoa(i) })
		}
		h.client.CloseIdleConnections()
		if err != nil {
			return fmt.Errorf("%s: storing the memory measurement's objects: %w", side.name, err)
		}
		if err := side.s.stop(); err != nil {
			return err
		}
	}
	all := scaleResourceOf(ScaleCustom).all
	for _, side := range sides {
		ready := &p.ReadyLoaded.Upstream
		if side.name == "apictl" {
			ready = &p.ReadyLoaded.Apictl
		}
		s, err := startSide(ctx, cfg, side, ready)
		if err != nil {
			return err
		}
		side.s = s
		h, err := s.target(ViaHTTP2, 1)
		if err != nil {
			return err
		}
		err = waitServed(ctx, h, all)
		h.client.CloseIdleConnections()
		if err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
	}
	// Both collect twice before the reading, so that it is what each holds, not what garbage and
	// pooled buffers its last collections happened to leave (a sync.Pool empties over two): read
	// without, apictl's anonymous memory moved by 13 MiB between runs of one binary.
	for _, side := range sides {
		if err := collectTwice(ctx, side.s); err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
	}
	if err := sleep(ctx, cfg.Settle); err != nil {
		return err
	}
	for _, side := range sides {
		m, err := side.s.proc.memoryDetail()
		if err != nil {
			return err
		}
		if side.name == "apictl" {
			p.RSS.Apictl, p.RSSAnon.Apictl, p.RSSFile.Apictl = m.RSS, m.Anon, m.File
		} else {
			p.RSS.Upstream, p.RSSAnon.Upstream, p.RSSFile.Upstream = m.RSS, m.Anon, m.File
		}
	}
	return nil
}

// collectTwice has s run two garbage collections, through the heap profile's gc parameter, which both
// servers serve (profiling is on by default in both) to the admin client.
func collectTwice(ctx context.Context, s *server) error {
	h, err := s.target(ViaHTTP2, 1)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	for range 2 {
		if err := h.do(ctx, http.MethodGet, "/debug/pprof/heap?gc=1", nil, http.StatusOK, nil); err != nil {
			return fmt.Errorf("collecting before the memory reading: %w", err)
		}
	}
	return nil
}

// upstreamArgs are the upstream server's flags, but for --secure-port: loopback, the harness's etcd
// under a prefix of its own, apictl's serving certificate and CA (pki) for TLS and client
// certificates, and the core API stub (kubeconfig) for everything it would ask a kube-apiserver.
// The stub has no extension-apiserver-authentication ConfigMap, so that lookup is skipped (the CA
// comes from --client-ca-file instead), and no flowcontrol API, which priority and fairness would
// need: the upstream server limits requests in flight instead, as apictl does.
func upstreamArgs(etcdURLs []string, pki, kubeconfig string) []string {
	return []string{
		"--bind-address", "127.0.0.1",
		"--etcd-servers", strings.Join(etcdURLs, ","),
		"--etcd-prefix", upstreamEtcdPrefix,
		"--tls-cert-file", certs.CertPath(pki, certs.NameAPIServer),
		"--tls-private-key-file", certs.KeyPath(pki, certs.NameAPIServer),
		"--client-ca-file", certs.CertPath(pki, certs.NameCA),
		"--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--authentication-skip-lookup",
		"--enable-priority-and-fairness=false",
	}
}

// startUpstream runs the upstream server in dir with args and a free --secure-port, and waits until
// its /readyz answers 200. The returned server speaks with apictl's PKI in apictlDir, which args
// make the upstream server use; it has no insecure port.
func startUpstream(ctx context.Context, binary, dir, apictlDir string, args []string) (*server, time.Duration, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("starting the upstream server: %w", err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, 0, fmt.Errorf("starting the upstream server: %w", err)
	}
	s := &server{dataDir: apictlDir, secureURL: "https://127.0.0.1:" + strconv.Itoa(ports[0])}
	s.readyURL = s.secureURL + "/readyz"
	tlsConfig, err := s.clientTLS(certs.NameAdmin)
	if err != nil {
		return nil, 0, err
	}
	s.probe = &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true, TLSClientConfig: tlsConfig}, Timeout: 10 * time.Second}
	began := time.Now()
	s.proc, err = startProcess("apiextensions-apiserver", binary, append(args, "--secure-port", strconv.Itoa(ports[0])), dir)
	if err != nil {
		return nil, 0, err
	}
	// A server that waits on something the stub does not answer would otherwise wait for good.
	ctx, cancel := context.WithTimeout(ctx, upstreamReadyTimeout)
	defer cancel()
	took, err := s.waitReady(ctx, "the upstream server", began, readyPollInterval)
	if err != nil {
		return nil, 0, errors.Join(err, s.stop())
	}
	return s, took, nil
}

// upstreamVersion names the module and version the binary was built from, as its build
// information records them.
func upstreamVersion(binary string) string {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return filepath.Base(binary) + " (no build information)"
	}
	return info.Main.Path + " " + info.Main.Version
}
