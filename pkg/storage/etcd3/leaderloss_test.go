package etcd3

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

func TestLeaderLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		// As the client returns them: the gRPC error turned into etcd's by rpctypes.Error.
		{"leader failed", rpctypes.Error(rpctypes.ErrGRPCTimeoutDueToLeaderFail), true},
		{"leader changed", rpctypes.Error(rpctypes.ErrGRPCLeaderChanged), true},
		{"connection lost", rpctypes.Error(rpctypes.ErrGRPCTimeoutDueToConnectionLost), true},
		{"timed out", rpctypes.Error(rpctypes.ErrGRPCTimeout), true},
		{"wrapped", fmt.Errorf("txn: %w", rpctypes.Error(rpctypes.ErrGRPCLeaderChanged)), true},
		// A write etcd refused outright was not made: nothing to settle.
		{"no leader", rpctypes.Error(rpctypes.ErrGRPCNoLeader), false},
		{"no space", rpctypes.Error(rpctypes.ErrGRPCNoSpace), false},
		{"too large", rpctypes.Error(rpctypes.ErrGRPCRequestTooLarge), false},
		{"deadline", context.DeadlineExceeded, false},
		{"other", errors.New("boom"), false},
	} {
		if got := leaderLost(tc.err); got != tc.want {
			t.Errorf("%s: leaderLost(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
