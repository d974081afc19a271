package snapshot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/storage/etcd3"
)

// Source says which etcd to snapshot: the external cluster in Endpoints, with the same files
// `apictl serve --etcd-*` takes, or, without Endpoints, the embedded etcd in DataDir/etcd.
type Source struct {
	DataDir                   string
	Endpoints                 []string
	CAFile, CertFile, KeyFile string
	// Timeout bounds each attempt to reach a member (default 5s).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Connect returns a client of one member of src's etcd (a snapshot is one member's) and a function
// that closes it. For an embedded etcd it reaches the running `apictl serve` through the URL and
// credentials it keeps in the data dir; when none runs there, it starts that etcd itself for the
// time of the snapshot, holding the data dir's lock so that serve cannot start on it meanwhile.
func Connect(ctx context.Context, src Source) (*clientv3.Client, func(context.Context) error, error) {
	if src.Timeout <= 0 {
		src.Timeout = 5 * time.Second
	}
	if len(src.Endpoints) > 0 {
		tlsConfig, err := clientTLS(src)
		if err != nil {
			return nil, nil, err
		}
		return firstMember(ctx, src.Endpoints, tlsConfig, src.Timeout)
	}
	dir := filepath.Join(src.DataDir, "etcd")
	if _, err := os.Stat(filepath.Join(dir, "member")); err != nil {
		return nil, nil, fmt.Errorf("no embedded etcd data in %s: give the --data-dir apictl serve uses, or --etcd-servers for an external cluster", src.DataDir)
	}
	if url, ok := embedded.RunningClientURL(dir); ok {
		creds, ok := embedded.ExistingCredentials(dir)
		if !ok {
			return nil, nil, fmt.Errorf("the etcd running in %s keeps no client credentials in %s", dir, filepath.Join(dir, "pki"))
		}
		src.CAFile, src.CertFile, src.KeyFile = creds.CAFile, creds.CertFile, creds.KeyFile
		tlsConfig, err := clientTLS(src)
		if err != nil {
			return nil, nil, err
		}
		return firstMember(ctx, []string{url}, tlsConfig, src.Timeout)
	}
	srv, err := embedded.Start(ctx, embedded.Config{Dir: dir, Private: true, Logger: src.Logger})
	if err != nil {
		return nil, nil, err
	}
	creds, _ := srv.ClientCredentials()
	src.CAFile, src.CertFile, src.KeyFile = creds.CAFile, creds.CertFile, creds.KeyFile
	tlsConfig, err := clientTLS(src)
	if err == nil {
		var cl *clientv3.Client
		var closeClient func(context.Context) error
		if cl, closeClient, err = firstMember(ctx, srv.ClientURLs(), tlsConfig, src.Timeout); err == nil {
			return cl, func(ctx context.Context) error { return errors.Join(closeClient(ctx), srv.Close(ctx)) }, nil
		}
	}
	return nil, nil, errors.Join(err, srv.Close(context.WithoutCancel(ctx)))
}

// firstMember connects to the first endpoint that answers a status request.
func firstMember(ctx context.Context, endpoints []string, tlsConfig *tls.Config, timeout time.Duration) (*clientv3.Client, func(context.Context) error, error) {
	var errs []error
	for _, ep := range endpoints {
		cl, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: timeout, TLS: tlsConfig, Logger: zap.NewNop()})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		_, err = cl.Status(sctx, ep)
		cancel()
		if err != nil {
			cl.Close()
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
			continue
		}
		return cl, func(context.Context) error { return cl.Close() }, nil
	}
	return nil, nil, fmt.Errorf("no etcd member answered: %w", errors.Join(errs...))
}

// clientTLS is the TLS of a client of src.
func clientTLS(src Source) (*tls.Config, error) {
	c, err := etcd3.ClientTLS(src.Endpoints, src.CAFile, src.CertFile, src.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("the etcd client's TLS: %w", err)
	}
	return c, nil
}
