package etcd3

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// CurrentRevision returns etcd's latest revision with a quorum read of a single key (counting a
// prefix would cost as much as listing it).
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, s.interpret("read the current revision", "", err)
	}
	return resp.Header.Revision, nil
}

// Healthy checks that etcd answers a quorum read within the health-check timeout.
func (s *Store) Healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.healthcheckTimeout)
	defer cancel()
	_, err := s.kv.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &storage.StorageError{Code: storage.Unavailable, Op: "health", Err: fmt.Errorf(
			"etcd at %s did not answer within %s: %w", s.endpoints, s.healthcheckTimeout, err)}
	}
	return &storage.StorageError{Code: storage.Unavailable, Op: "health", Err: fmt.Errorf(
		"etcd at %s is not healthy: %w", s.endpoints, err)}
}
