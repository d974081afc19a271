// Package embedded runs a single-member etcd inside the apictl process, so that `apictl serve` works
// without an etcd cluster. It listens on 127.0.0.1 only, on a port the OS picks, and keeps its data in
// a directory of its own, so that a restart finds everything it stored. A private etcd (what `apictl
// serve` runs) takes only TLS clients that present the client certificate kept in its 0700 directory,
// so that no other local process, of this user or another, can read or plant objects.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"

	"github.com/apictl/apictl/pkg/gcrelax"
	"github.com/apictl/apictl/pkg/storage/internal/zapslog"
)

// Config says where and how to run the embedded etcd.
type Config struct {
	// Dir holds etcd's data (apictl uses <data-dir>/etcd). It is created, private to the user, if
	// missing; a directory that already holds data is reused.
	Dir string
	// Logger receives etcd's logs. Nil discards them.
	Logger *slog.Logger
	// LogLevel is the lowest level of etcd's logs that reach Logger; nil means slog.LevelWarn, because
	// etcd is chatty at info level.
	LogLevel slog.Leveler
	// ClientAddress is the host:port of the client listener. Empty means 127.0.0.1 on a port the OS
	// picks, so that nothing can collide; a fixed port is for tests that restart etcd under a
	// connected client. Without Private the etcd has no authentication: keep it on loopback.
	ClientAddress string
	// UnsafeNoFsync skips fsync: a crash can lose data. For tests only.
	UnsafeNoFsync bool
	// QuotaBackendBytes is the size etcd's database may reach before etcd refuses writes with its
	// NOSPACE alarm; 0 means etcd's default (2 GiB).
	QuotaBackendBytes int64
	// Private serves clients over TLS only and requires the client certificate in <Dir>/pki (see
	// ClientCredentials), made on the first start. Without it etcd takes plain, unauthenticated
	// connections: for tests and the benchmark harness's own etcd, never for serving users' data.
	Private bool
	// Cluster, when set, makes the etcd a member of a cluster of apictl servers rather than one alone.
	Cluster *ClusterConfig
}

// Server is a running embedded etcd.
type Server struct {
	etcd       *embed.Etcd
	lock       *fileutil.LockedFile
	clientURLs []string
	// client is what a client presents to a private etcd; zero otherwise.
	client Credentials
	// cluster is the member's configuration; nil when it runs alone.
	cluster *ClusterConfig
	// closing is set when Close starts, so that the log filter knows listener errors are expected.
	closing  *atomic.Bool
	stopOnce sync.Once
	stopped  chan struct{}
}

const (
	// name is the member's name; it is written into the data dir and must stay the same across
	// restarts.
	name = "apictl"
	// defaultClientAddress asks the OS for a free loopback port: no fixed port that another process
	// could hold.
	defaultClientAddress = "127.0.0.1:0"
	// unusedPeerURL is the peer URL the single member advertises. Nothing listens on it: a member alone
	// in its cluster never talks to peers, and not listening means nobody can join it. Port 0 is never
	// dialled; it only satisfies etcd's "host:port" check.
	unusedPeerURL = "http://127.0.0.1:0"
	// A member alone in its cluster elects itself once a randomized election timeout has passed.
	// etcd's defaults (100ms ticks, 1s timeout) make a fresh start wait up to a second; these bring
	// it to 10-50ms (BenchmarkEmbeddedStart), at the cost of a timer that fires a hundred times a
	// second and has nothing to do without peers.
	tickMs     = 10
	electionMs = 50
	// snapshotCatchUpEntries is how many applied raft entries etcd keeps in memory after it
	// compacts its raft log (every 100 entries): they are for followers that fall behind, and a
	// member alone in its cluster has none. etcd's default, 5000, keeps the last 5000 writes'
	// requests in memory: 4 MB of heap and 10 MB of resident memory once 12,000 small ConfigMaps
	// have been written (the benchmark harness's loaded measurement). Restarts are unaffected: they
	// replay the WAL from the last snapshot on disk.
	snapshotCatchUpEntries = 100
	// maxWALFiles is how many write-ahead log files of 64 MB etcd keeps. Opening reads every one
	// kept to find the last snapshot in them: etcd's default, 5, made that 0.26 s of a start
	// with a million objects, keeping only one 0.3 s less. Files that are still needed (from the
	// last snapshot on) are locked and never removed whatever the number, so the older ones only
	// serve inspection; two keep the one before the current one.
	maxWALFiles = 2
	// lockFile, in the data directory, is held while etcd runs there.
	lockFile = "apictl.lock"
	// initialClusterToken names the cluster a new member bootstraps.
	initialClusterToken = "apictl-embedded"
)

// Start runs etcd in cfg.Dir and returns once it serves requests. ctx bounds the wait for readiness;
// on failure nothing keeps running.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("start embedded etcd: no data directory given")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start embedded etcd in %s: %w", cfg.Dir, err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	if err := checkStartSpace(cfg.Dir); err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	// etcd itself would wait forever for the lock on its database if another process runs on the
	// same directory; this lock fails at once instead.
	lock, err := fileutil.TryLockFile(filepath.Join(cfg.Dir, lockFile), os.O_WRONLY|os.O_CREATE, 0o600)
	if errors.Is(err, fileutil.ErrLocked) {
		return nil, fmt.Errorf("start embedded etcd: %s is in use by another apictl process; stop it or use another data directory", cfg.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: lock %s: %w", cfg.Dir, err)
	}
	closing, removed := new(atomic.Bool), new(atomic.Bool)
	fail := func(e *embed.Etcd, err error) (*Server, error) {
		if e != nil {
			closing.Store(true)
			e.Close()
		}
		lock.Close()
		return nil, fmt.Errorf("start embedded etcd in %s: %w", cfg.Dir, err)
	}
	var server, client Credentials
	if cfg.Private {
		if server, client, err = ensureCredentials(cfg.Dir, time.Now()); err != nil {
			return fail(nil, err)
		}
	}
	ecfg, err := etcdConfig(cfg, server, closing, removed)
	if err != nil {
		return fail(nil, err)
	}
	// Opening rebuilds etcd's key index from every key, decoding each key-value on the way: as much
	// garbage as it keeps, while the live heap grows from nothing to the whole index.
	opened := gcrelax.Hold()
	e, err := embed.StartEtcd(ecfg)
	opened()
	if err != nil {
		return fail(nil, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fail(e, removedOr(removed.Load(), cfg.Dir, err))
	case <-e.Server.StopNotify():
		return fail(e, removedOr(removed.Load(), cfg.Dir, errors.New("etcd stopped before it was ready (its log says why)")))
	case <-ctx.Done():
		return fail(e, fmt.Errorf("not ready in time: %w", context.Cause(ctx)))
	}
	s := &Server{etcd: e, lock: lock, client: client, cluster: cfg.Cluster, closing: closing, stopped: make(chan struct{})}
	if err := s.updatePeerURL(ctx); err != nil {
		return fail(e, err)
	}
	// The configured client URL says port 0; the listener knows the port the OS chose.
	for _, l := range e.Clients {
		s.clientURLs = append(s.clientURLs, scheme(cfg)+"://"+l.Addr().String())
	}
	// Written after the lock is held, read by apictl snapshot save; a failure only costs that.
	if err := writeFile(filepath.Join(cfg.Dir, clientURLFile), []byte(s.clientURLs[0]+"\n")); err != nil && cfg.Logger != nil {
		cfg.Logger.Warn("recording the embedded etcd's client URL", "err", err)
	}
	if cfg.Logger != nil {
		cfg.Logger.Debug("embedded etcd ready", "dir", cfg.Dir, "endpoints", s.clientURLs)
	}
	return s, nil
}

// scheme is the client URLs' scheme.
func scheme(cfg Config) string {
	if cfg.Private {
		return "https"
	}
	return "http"
}

func etcdConfig(cfg Config, server Credentials, closing, removed *atomic.Bool) (*embed.Config, error) {
	address := cfg.ClientAddress
	if address == "" {
		address = defaultClientAddress
	}
	client, err := url.Parse(scheme(cfg) + "://" + address)
	if err != nil {
		return nil, fmt.Errorf("client address %q: %w", address, err)
	}
	peer, err := url.Parse(unusedPeerURL)
	if err != nil {
		return nil, err
	}
	ecfg := embed.NewConfig()
	ecfg.Name = name
	ecfg.Dir = cfg.Dir
	ecfg.UnsafeNoFsync = cfg.UnsafeNoFsync
	ecfg.ListenClientUrls = []url.URL{*client}
	if cfg.Private {
		ecfg.ClientTLSInfo = transport.TLSInfo{
			CertFile: server.CertFile, KeyFile: server.KeyFile, TrustedCAFile: server.CAFile,
			ClientCertAuth: true,
			// Only the client certificate made with the server's own: the CA signed nothing else.
			AllowedCNs: []string{clientCommonName},
		}
	}
	// The advertised client URL is only published in the member list, which apictl's client never
	// reads (no endpoint auto-sync); with port 0 the real port is not known before the listener exists.
	ecfg.AdvertiseClientUrls = []url.URL{*client}
	ecfg.ListenPeerUrls = nil
	ecfg.AdvertisePeerUrls = []url.URL{*peer}
	// Only read when the data dir is new; a restart takes the membership from the data.
	ecfg.InitialCluster = name + "=" + unusedPeerURL
	ecfg.InitialClusterToken = initialClusterToken
	ecfg.ListenMetricsUrls = nil
	// The gRPC gateway would dial the configured client address, port 0; apictl speaks gRPC only.
	ecfg.EnableGRPCGateway = false
	// apictl's store compacts (--etcd-compaction-interval), as kube-apiserver does.
	ecfg.AutoCompactionMode = embed.CompactorModePeriodic
	ecfg.AutoCompactionRetention = "0"
	ecfg.TickMs = tickMs
	ecfg.ElectionMs = electionMs
	ecfg.SnapshotCatchUpEntries = snapshotCatchUpEntries
	ecfg.MaxWalFiles = maxWALFiles
	ecfg.QuotaBackendBytes = cfg.QuotaBackendBytes
	if cfg.Cluster != nil {
		if err := applyCluster(ecfg, cfg.Dir, cfg.Cluster); err != nil {
			return nil, err
		}
	}
	ecfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapslog.New(cfg.Logger, zapslog.Options{
		Level: cfg.LogLevel,
		Demote: func(entry zapcore.Entry, fields []zapcore.Field) bool {
			if entry.Message == removedMessage {
				removed.Store(true)
			}
			return expected(entry, fields, closing.Load())
		},
	}))
	return ecfg, nil
}

// ClientCredentials are the files a client of a private etcd presents; ok is false when the etcd is
// not private.
func (s *Server) ClientCredentials() (c Credentials, ok bool) {
	return s.client, s.client != Credentials{}
}

// ClientURLs are the URLs a client reaches this etcd at.
func (s *Server) ClientURLs() []string {
	return append([]string(nil), s.clientURLs...)
}

// Err reports a failure of the running etcd, such as a listener that stopped serving. It is closed
// once the server has stopped.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops etcd: in-flight requests get a moment to finish, then connections are cut and the data
// is flushed. ctx bounds the wait; if it ends first, Close returns its error and the stop finishes in
// the background. Calling Close again waits for the same stop.
func (s *Server) Close(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.closing.Store(true)
		go func() {
			defer close(s.stopped)
			s.etcd.Close()
			_ = os.Remove(filepath.Join(s.etcd.Config().Dir, clientURLFile))
			s.lock.Close()
		}()
	})
	select {
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop embedded etcd in %s: %w", s.etcd.Config().Dir, context.Cause(ctx))
	}
}
