package embedded

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The messages are etcd v3.7's, copied from its source with the fields it logs them with: a test
// that fails after an upgrade of etcd points at a message that changed.
func TestExpected(t *testing.T) {
	const heartbeat = "leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk"
	tests := []struct {
		name    string
		message string
		fields  []zapcore.Field
		closing bool
		demoted bool
	}{
		// Routine in a cluster's life: demoted.
		{"a stream ends when a peer restarts", "lost TCP streaming connection with remote peer",
			[]zapcore.Field{zap.String("stream-reader-type", "stream MsgApp v2"), zap.Error(errors.New("EOF"))}, false, true},
		{"a stream is closed", "closed TCP streaming connection with remote peer",
			[]zapcore.Field{zap.String("stream-writer-type", "stream Message")}, false, true},
		{"a new member dials a follower that has not applied its addition", "failed to find remote peer in cluster",
			[]zapcore.Field{zap.String("remote-peer-id-from", "9e7c7d29c48c39ed")}, false, true},
		{"a join within five seconds of the member's start", "rejecting member add request; local member has not been connected to majority peers, reconfigure breaks active quorum",
			[]zapcore.Field{zap.Error(errors.New("etcdserver: unhealthy cluster"))}, false, true},
		{"a learner not caught up yet, on the leader", "rejecting promote learner: learner is not ready",
			[]zapcore.Field{zap.Float64("learner-ready-percent", 0)}, false, true},
		{"a learner not caught up yet, forwarded", "failed to promote a member",
			[]zapcore.Field{zap.Error(errors.New("etcdserver: can only promote a learner member which is in sync with leader"))}, false, true},
		{"a read waits for an election", "waiting for ReadIndex response took too long, retrying",
			[]zapcore.Field{zap.Duration("retry-timeout", 500*time.Millisecond)}, false, true},
		{"a heartbeat a little late", heartbeat,
			[]zapcore.Field{zap.Duration("heartbeat-interval", 50*time.Millisecond), zap.Duration("expected-duration", 100*time.Millisecond), zap.Duration("exceeded-duration", 30*time.Millisecond)}, false, true},
		{"a request of 110 ms on a first start", "apply request took too long",
			[]zapcore.Field{zap.Duration("took", 110*time.Millisecond), zap.Duration("expected-duration", 100*time.Millisecond)}, false, true},
		{"a request of 400 ms", "request stats",
			[]zapcore.Field{zap.Duration("time spent", 400*time.Millisecond)}, false, true},
		{"a new member's first election before its membership is applied", "faa37c0158650bd2 cannot campaign at term 1 since there are still pending configuration changes to apply", nil, false, true},
		{"the single-port notice", "Running http and grpc server on single port. This is not recommended for production.", nil, false, true},
		{"a listener closed by Close", "serving client traffic failed",
			[]zapcore.Field{zap.Error(errors.New("accept tcp 127.0.0.1:2379: use of closed network connection"))}, true, true},
		{"a stopping member's own streams", "peer became inactive (message send to peer failed)",
			[]zapcore.Field{zap.Error(errors.New("failed to read 3294a8a77cb2205 on stream MsgApp v2 (context canceled)"))}, true, true},
		{"the storage version monitor before the first entry", "failed to update storage version",
			[]zapcore.Field{zap.Error(errors.New("cannot detect storage schema version: missing term information"))}, false, true},

		// Real problems: kept.
		{"a peer is unreachable", "peer became inactive (message send to peer failed)",
			[]zapcore.Field{zap.String("peer-id", "9644bfcea8abd24b"), zap.Error(errors.New("failed to dial"))}, false, false},
		{"a peer's streams canceled while this member runs", "peer became inactive (message send to peer failed)",
			[]zapcore.Field{zap.Error(errors.New("failed to read 3294a8a77cb2205 on stream MsgApp v2 (context canceled)"))}, false, false},
		{"a peer stays away", "prober detected unhealthy status",
			[]zapcore.Field{zap.String("remote-peer-id", "9644bfcea8abd24b")}, false, false},
		{"a degraded cluster refuses a join", "rejecting member add request; not enough healthy members",
			[]zapcore.Field{zap.Error(errors.New("etcdserver: unhealthy cluster"))}, false, false},
		{"a promotion that fails otherwise", "failed to promote a member",
			[]zapcore.Field{zap.Error(errors.New("etcdserver: member not found"))}, false, false},
		{"a read that got no answer", "timed out waiting for read index response (local node might have slow network)",
			[]zapcore.Field{zap.Duration("timeout", 6*time.Second)}, false, false},
		{"a heartbeat late enough to risk an election", heartbeat,
			[]zapcore.Field{zap.Duration("expected-duration", 100*time.Millisecond), zap.Duration("exceeded-duration", 200*time.Millisecond)}, false, false},
		{"a heartbeat warning without its durations", heartbeat, nil, false, false},
		{"a request of six seconds", "apply request took too long",
			[]zapcore.Field{zap.Duration("took", 6*time.Second), zap.Error(errors.New("etcdserver: request timed out"))}, false, false},
		{"request stats of a second", "request stats",
			[]zapcore.Field{zap.Duration("time spent", time.Second)}, false, false},
		{"request stats without a duration", "request stats", []zapcore.Field{zap.String("time spent", "fast")}, false, false},
		{"quorum lost", "9e7c7d29c48c39ed stepped down to follower since quorum is not active", nil, false, false},
		{"the space quota", "alarm raised", []zapcore.Field{zap.String("alarm", "NOSPACE")}, false, false},
		{"a slow disk", "slow fdatasync", []zapcore.Field{zap.Duration("took", 2*time.Second)}, false, false},
		{"a listener that fails while serving", "serving client traffic failed",
			[]zapcore.Field{zap.Error(errors.New("accept tcp 127.0.0.1:2379: use of closed network connection"))}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expected(zapcore.Entry{Level: zapcore.WarnLevel, Message: tt.message}, tt.fields, tt.closing); got != tt.demoted {
				t.Errorf("expected(%q) = %v, want %v", tt.message, got, tt.demoted)
			}
		})
	}
}
