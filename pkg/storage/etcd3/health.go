package etcd3

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

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
