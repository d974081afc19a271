package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/encryption"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

// storageStack is the running storage: the store, and the embedded etcd under it when there is one.
type storageStack struct {
	store    *etcd3.Store
	embedded *embedded.Server
	// space guards the embedded etcd's disk; nil for an external cluster.
	space *spaceGuard
	// encryption encrypts values at rest; nil without --encryption-provider-config.
	encryption *encryption.Transformers
}

// startStorage starts the embedded etcd in <data-dir>/etcd unless --etcd-servers names a cluster, and
// connects the store to it. The store's connection retries are bounded by --etcd-healthcheck-timeout,
// so an unreachable cluster fails the start with a message naming it. served are the resources whose
// values --encryption-provider-config may encrypt.
func startStorage(ctx context.Context, o *flags.ServerOptions, log *slog.Logger, unsafeNoFsync bool, served []schema.GroupResource, ec *embeddedCluster) (*storageStack, error) {
	st := &storageStack{}
	// The file is read before etcd starts: a bad one fails the start at once, with kube's message.
	encryptionConfig, err := o.Encryption.Load()
	if err != nil {
		return nil, fmt.Errorf("loading --encryption-provider-config: %w", err)
	}
	var transformers etcd3.Transformers
	if encryptionConfig != nil {
		st.encryption = encryption.NewTransformers(encryptionConfig, served)
		transformers = st.encryption
		log.Info("encrypting at rest", "config", o.Encryption.ProviderConfig, "hash", encryptionConfig.Hash(),
			"automaticReload", o.Encryption.AutomaticReload)
	}
	endpoints := o.Etcd.Servers
	caFile, certFile, keyFile := o.Etcd.CAFile, o.Etcd.CertFile, o.Etcd.KeyFile
	if len(endpoints) == 0 {
		began := time.Now()
		dir := filepath.Join(o.Generic.DataDir, "etcd")
		ecfg := embedded.Config{Dir: dir, Logger: log.With("component", "etcd"), UnsafeNoFsync: unsafeNoFsync,
			Private: true, QuotaBackendBytes: o.Etcd.QuotaBackendBytes}
		if p := o.Etcd.Cluster.ClientPort; p != 0 {
			ecfg.ClientAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		}
		if ec != nil {
			ecfg.Cluster = &ec.config
		}
		srv, err := embedded.Start(ctx, ecfg)
		if err != nil {
			return nil, fmt.Errorf("starting the embedded etcd in %s: %w", dir, err)
		}
		if err := promote(ctx, srv, log); err != nil {
			_ = srv.Close(context.Background())
			return nil, err
		}
		st.embedded = srv
		st.space = newSpaceGuard(srv, o.Etcd.QuotaBackendBytes, log)
		endpoints = srv.ClientURLs()
		creds, _ := srv.ClientCredentials()
		caFile, certFile, keyFile = creds.CAFile, creds.CertFile, creds.KeyFile
		log.Info("embedded etcd started", "dir", dir, "endpoints", endpoints, "took", time.Since(began).Round(time.Millisecond))
	}
	var writeGate func() error
	if st.space != nil {
		writeGate = st.space.gate
	}
	var quorumGate func(context.Context) error
	if st.embedded != nil && st.embedded.PeerURL() != "" {
		quorumGate = quorumGateOf(st.embedded)
	}
	var localRange etcd3.LocalRanger
	if st.embedded != nil {
		localRange = st.embedded
	}
	store, err := etcd3.New(ctx, etcd3.Config{
		Endpoints:          endpoints,
		Prefix:             o.Etcd.Prefix,
		CAFile:             caFile,
		CertFile:           certFile,
		KeyFile:            keyFile,
		HealthcheckTimeout: o.Etcd.HealthcheckTimeout,
		CompactionInterval: o.Etcd.CompactionInterval,
		WriteGate:          writeGate,
		QuorumGate:         quorumGate,
		Transformers:       transformers,
		LocalRange:         localRange,
		Logger:             log.With("component", "storage"),
	})
	if err != nil {
		st.close(context.Background())
		return nil, err
	}
	st.store = store
	if st.space != nil {
		st.space.store = store
	}
	return st, nil
}

// The embedded etcd fills watch caches without gRPC in between.
var _ etcd3.LocalRanger = (*embedded.Server)(nil)

// quorumGateOf refuses writes with Unavailable (503) once the member's cluster has had no leader
// for a few seconds.
func quorumGateOf(srv *embedded.Server) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := srv.WaitLeader(ctx); err != nil {
			return &storage.StorageError{Code: storage.Unavailable, Op: "write", Err: err}
		}
		return nil
	}
}

// promoteTimeout bounds how long a new member may take to catch up with its cluster's leader.
const promoteTimeout = 10 * time.Minute

// promote waits until a member that joined as a learner is a voting member: a learner serves no
// linearizable read or write.
func promote(ctx context.Context, srv *embedded.Server, log *slog.Logger) error {
	if !srv.IsLearner() {
		return nil
	}
	began := time.Now()
	log.Info("the embedded etcd joined as a learner: catching up with the cluster's leader before serving")
	pctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if err := srv.Promote(pctx); err != nil {
		return err
	}
	log.Info("the embedded etcd is a voting member", "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// close releases the store first, then stops the embedded etcd: etcd goes last.
func (st *storageStack) close(ctx context.Context) error {
	var err error
	if st.store != nil {
		err = st.store.Close()
	}
	if st.embedded != nil {
		if e := st.embedded.Close(ctx); e != nil && err == nil {
			err = e
		}
	}
	return err
}
