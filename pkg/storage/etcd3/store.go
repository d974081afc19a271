// Package etcd3 implements storage.Store on etcd's v3 API.
//
// Every key the store writes lives under Config.Prefix: the client's KV, Watcher and Lease are wrapped
// by go.etcd.io/etcd/client/v3/namespace, so the code below speaks in the caller's keys only.
package etcd3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap/zapcore"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/zapslog"
)

// Config says how to reach etcd and how the store behaves. Zero values take the defaults named on
// each field.
type Config struct {
	// Endpoints are etcd's client URLs (https://10.0.0.1:2379). Required.
	Endpoints []string
	// Prefix is prepended to every key (--etcd-prefix, kube's "/registry"); a "/" is added if it does
	// not end in one. Empty means the keys are used as they are.
	Prefix string
	// CAFile verifies etcd's serving certificate; CertFile and KeyFile are the client certificate.
	// With none of them, https endpoints are verified against the system's roots.
	CAFile, CertFile, KeyFile string
	// HealthcheckTimeout bounds Healthy and each connection attempt of New (default 2s).
	HealthcheckTimeout time.Duration
	// CompactionInterval is how often StartCompactor compacts old revisions; 0 disables compaction.
	CompactionInterval time.Duration
	// LeaseReuseDuration is the longest a key written with a TTL may outlive it because it shares a
	// lease with keys written shortly before (kube's --lease-reuse-duration-seconds, default 60s).
	// Sharing leases keeps their number small when many keys with a TTL are written (Events).
	LeaseReuseDuration time.Duration
	// WatchBufferSize is how many events a watch holds for a reader that has not taken them yet
	// (default 1000). A reader that leaves the buffer full for a second gets a TooSlow error event.
	WatchBufferSize int
	// WriteGate, when set, is asked before every create and update, and its error (a NoSpace
	// StorageError, say) refuses the write. It is on the write path: it must answer from memory.
	WriteGate func() error
	// QuorumGate, when set, is asked before every create, update and delete, with the request's
	// context. A member of an embedded etcd cluster waits there a moment for a leader and refuses
	// with Unavailable when its cluster has lost its quorum, rather than leaving the request to hang
	// until its deadline. It is on the write path: it must answer from memory when all is well.
	QuorumGate func(context.Context) error
	// Transformers, when set, encrypts each resource's values at rest (--encryption-provider-config).
	// Nil stores values as they are, at no cost.
	Transformers Transformers
	// LocalRange, when set, is the etcd member of this process (the embedded etcd): ListChunks reads
	// from it directly. Nil reads through the client, as for an external cluster.
	LocalRange LocalRanger
	// Logger receives the store's and the etcd client's logs (warnings and errors only for the
	// client). Nil discards them.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultHealthcheckTimeout = 2 * time.Second
	DefaultLeaseReuseDuration = 60 * time.Second
	DefaultWatchBufferSize    = 1000
)

const (
	// startupAttempts is how many HealthcheckTimeouts New waits for etcd before it gives up.
	startupAttempts = 3
	// slowWatchGrace is how long a watch waits for room in a full buffer before it gives up on the
	// reader: long enough to ride out a burst, short enough that etcd's events do not pile up.
	slowWatchGrace = time.Second
	// compactRevKey holds the compaction state that several apictl servers share (kube's scheme).
	compactRevKey = "compact_rev_key"
)

// Store is the etcd3 implementation of storage.Store. Its methods are safe for concurrent use.
type Store struct {
	client  *clientv3.Client
	kv      clientv3.KV
	watcher clientv3.Watcher
	leases  *leaseManager

	// endpoints names the cluster in error messages.
	endpoints          string
	tlsConfig          *tls.Config
	healthcheckTimeout time.Duration
	compactionInterval time.Duration
	// compacted is the revision etcd was last seen compacted to (CompactedRevision).
	compacted       atomic.Int64
	watchBufferSize int
	slowWatchGrace  time.Duration
	writeGate       func() error
	quorumGate      func(context.Context) error
	logger          *slog.Logger
	// codec encrypts values at rest, if configured.
	codec codec
	// localRange reads from the etcd member in this process; nil when etcd is elsewhere.
	localRange LocalRanger
	// prefix is the etcd key prefix the namespace wrappers add: a transformer authenticates the full key.
	prefix string

	mu      sync.Mutex
	closed  bool
	cancels []context.CancelFunc
	wg      sync.WaitGroup

	// activeWatches counts the etcd watches open now: with watch caches, one per resource however many
	// clients watch.
	activeWatches atomic.Int64
	// revisions shares quorum reads of the current revision among concurrent callers.
	revisions *revisionReads
}

// mayWrite asks the write gate, if there is one.
func (s *Store) mayWrite() error {
	if s.writeGate == nil {
		return nil
	}
	return s.writeGate()
}

// haveQuorum asks the quorum gate, if there is one.
func (s *Store) haveQuorum(ctx context.Context) error {
	if s.quorumGate == nil {
		return nil
	}
	return s.quorumGate(ctx)
}

// ActiveWatches returns how many etcd watches the store has open.
func (s *Store) ActiveWatches() int64 { return s.activeWatches.Load() }

var (
	_ storage.Store             = (*Store)(nil)
	_ storage.ProgressRequester = (*Store)(nil)
)

// New connects to etcd and checks that it answers, retrying for up to a few HealthcheckTimeouts; it
// fails with an error naming the endpoints if etcd stays silent. ctx bounds the whole wait.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("connect to etcd: no endpoints given")
	}
	if cfg.HealthcheckTimeout <= 0 {
		cfg.HealthcheckTimeout = DefaultHealthcheckTimeout
	}
	if cfg.LeaseReuseDuration <= 0 {
		cfg.LeaseReuseDuration = DefaultLeaseReuseDuration
	}
	if cfg.WatchBufferSize <= 0 {
		cfg.WatchBufferSize = DefaultWatchBufferSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	endpoints := strings.Join(cfg.Endpoints, ", ")
	tlsConfig, err := clientTLS(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to etcd at %s: %w", endpoints, err)
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.HealthcheckTimeout,
		// Find a dead connection within a minute rather than when TCP gives up, like kube-apiserver.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		TLS:                  tlsConfig,
		Logger: zapslog.New(cfg.Logger.With("component", "etcd-client"), zapslog.Options{
			// Every failed request is also returned to its caller, who reports it: logging it here
			// too would flood the log while etcd is down.
			Demote: func(entry zapcore.Entry, _ []zapcore.Field) bool {
				return entry.Message == "retrying of unary invoker failed"
			},
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd at %s: %w", endpoints, err)
	}
	prefix := cfg.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	s := &Store{
		client:             client,
		kv:                 namespace.NewKV(client.KV, prefix),
		watcher:            namespace.NewWatcher(client.Watcher, prefix),
		leases:             newLeaseManager(namespace.NewLease(client.Lease, prefix), cfg.LeaseReuseDuration),
		endpoints:          endpoints,
		tlsConfig:          tlsConfig,
		healthcheckTimeout: cfg.HealthcheckTimeout,
		compactionInterval: cfg.CompactionInterval,
		watchBufferSize:    cfg.WatchBufferSize,
		writeGate:          cfg.WriteGate,
		quorumGate:         cfg.QuorumGate,
		codec:              codec{transformers: cfg.Transformers, prefix: prefix},
		localRange:         cfg.LocalRange,
		prefix:             prefix,
		slowWatchGrace:     slowWatchGrace,
		logger:             cfg.Logger,
		revisions:          newRevisionReads(),
	}
	_ = s.goBackground(context.Background(), func(ctx context.Context) { s.revisions.loop(ctx, s.readRevision) })
	if err := s.waitReachable(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// clientTLS builds the client's TLS configuration (ClientTLS).
func clientTLS(cfg Config) (*tls.Config, error) {
	return ClientTLS(cfg.Endpoints, cfg.CAFile, cfg.CertFile, cfg.KeyFile)
}

// ClientTLS is the TLS configuration of an etcd client, as `apictl serve --etcd-*` sets it: from the
// files when any is given, the system's roots for https endpoints otherwise, none for plain http.
func ClientTLS(endpoints []string, caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		for _, ep := range endpoints {
			if strings.HasPrefix(ep, "https://") {
				return &tls.Config{MinVersion: tls.VersionTLS12}, nil
			}
		}
		return nil, nil
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both a certificate file and a key file")
	}
	info := transport.TLSInfo{CertFile: certFile, KeyFile: keyFile, TrustedCAFile: caFile}
	tlsConfig, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load TLS files: %w", err)
	}
	return tlsConfig, nil
}

// waitReachable asks etcd for a quorum read until it answers, for up to startupAttempts health-check
// timeouts, pausing a little longer after each failure. An etcd that answers with an error (such as
// permission denied) is not retried: waiting would not change its answer.
func (s *Store) waitReachable(parent context.Context) error {
	bound := startupAttempts * s.healthcheckTimeout
	ctx, cancel := context.WithTimeout(parent, bound)
	defer cancel()
	pause := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		attemptCtx, attemptCancel := context.WithTimeout(ctx, s.healthcheckTimeout)
		_, err := s.kv.Get(attemptCtx, compactRevKey, clientv3.WithCountOnly())
		attemptCancel()
		switch {
		case err == nil:
			return nil
		case parent.Err() != nil:
			return fmt.Errorf("connect to etcd at %s: %w", s.endpoints, parent.Err())
		case !errors.Is(err, context.DeadlineExceeded) && !unavailable(err):
			return fmt.Errorf("etcd at %s refused a read: %w", s.endpoints, err)
		}
		select {
		case <-ctx.Done():
			return &storage.StorageError{Code: storage.Unavailable, Op: "connect", Err: fmt.Errorf(
				"etcd at %s did not answer within %s (%d attempts): %w", s.endpoints, bound, attempt, s.diagnose(ctx, err))}
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// Close stops the compactor and releases the client; watches end. The store is unusable afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancels := s.cancels
	s.cancels = nil
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
	s.wg.Wait()
	// The namespace watcher runs goroutines of its own; closing it stops them before the client goes.
	werr := s.watcher.Close()
	cerr := s.client.Close()
	if errors.Is(cerr, context.Canceled) {
		cerr = nil
	}
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("close etcd client: %w", err)
	}
	return nil
}

// goBackground runs f in a goroutine that Close stops and waits for; on a closed store it does
// nothing and returns false. Each call keeps a cancel function until Close: for long-lived loops only.
func (s *Store) goBackground(ctx context.Context, f func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancels = append(s.cancels, cancel)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		f(ctx)
	}()
	return true
}
