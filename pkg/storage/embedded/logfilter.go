package embedded

import (
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
)

// notices are warnings etcd logs about settings this package chose on purpose; they say nothing an
// operator of apictl could act on.
var notices = map[string]bool{
	// One loopback listener serves gRPC; apictl does not use etcd's HTTP endpoints.
	"Running http and grpc server on single port. This is not recommended for production.": true,
	// Authentication is off: the embedded etcd listens on loopback and only apictl talks to it.
	"simple token is not cryptographically signed": true,
}

// slowRequest is how long an etcd request takes before etcd's warning about it is kept. etcd warns
// from 100 ms (an applied request) and 300 ms (a gRPC request's stats), which a busy machine reaches
// on a first start; kube-apiserver traces its etcd requests from 500 ms, and so does apictl.
const slowRequest = 500 * time.Millisecond

// routine are the warnings and errors etcd logs in the normal life of a cluster of apictl members
// (one joining, restarting or stopping), each with the condition under which it is routine; nil
// means always. Every line of a peer that is really lost, of quorum, disk or alarms is kept.
var routine = map[string]func(fields []zapcore.Field) bool{
	// Two members talk over four streams, two each way, and each stream reports its own end when a
	// peer restarts, stops or replaces it: a line per stream and member at every restart. That a
	// peer cannot be reached is said once by "peer became inactive", which is kept, as are the
	// prober's "unhealthy status" lines that repeat while it stays away.
	"lost TCP streaming connection with remote peer":   nil,
	"closed TCP streaming connection with remote peer": nil,
	// A member that has not applied a membership change yet refuses the streams of the member it
	// adds, which dials again and is accepted once the change is applied: a join shows this on
	// every follower that applies it late. A removed member and a foreign cluster have lines of
	// their own, which are kept.
	"failed to find remote peer in cluster": nil,
	// etcd changes membership only once the member has been connected to a quorum for five seconds
	// (its HealthInterval), so a member that just started or joined refuses a join for that long.
	// The joiner asks again, and the member's join handler logs each refusal with the joiner's name.
	// "not enough healthy members", a cluster that really is degraded, is kept.
	"rejecting member add request; local member has not been connected to majority peers, reconfigure breaks active quorum": nil,
	// A learner asks to be promoted until its log has caught up with the leader's; the refusals
	// before then are the wait apictl logs as "joined as a learner: catching up". Any other failure
	// to promote is kept.
	"rejecting promote learner: learner is not ready": nil,
	"failed to promote a member":                      errorContains("can only promote a learner member which is in sync with leader"),
	// Repeated every 500 ms while a linearizable read waits for a leader, as during the election
	// after a leader restarted. A read that gets no answer is reported once by "timed out waiting
	// for read index response", which is kept, and by apictl's own errors.
	"waiting for ReadIndex response took too long, retrying": nil,
	// etcd warns when a heartbeat goes out later than twice its interval (100 ms with apictl's
	// 50 ms), which a loaded machine does. Followers start an election only after the election
	// timeout, 500 ms or more: a heartbeat gap under half of it leaves the leader safely in place.
	"leader failed to send out heartbeat on time; took too long, leader is overloaded likely from slow disk": func(fields []zapcore.Field) bool {
		expected, ok1 := fieldDuration(fields, "expected-duration")
		exceeded, ok2 := fieldDuration(fields, "exceeded-duration")
		return ok1 && ok2 && expected+exceeded < clusterElectionMs*time.Millisecond/2
	},
	// Slow requests under slowRequest (see there).
	"apply request took too long": durationBelow("took", slowRequest),
	"request stats":               durationBelow("time spent", slowRequest),
}

// expected reports whether an entry etcd logs as a warning or an error is a normal part of the
// embedded etcd's life, to be logged at debug level instead.
func expected(entry zapcore.Entry, fields []zapcore.Field, closing bool) bool {
	if notices[entry.Message] {
		return true
	}
	if cond, ok := routine[entry.Message]; ok && (cond == nil || cond(fields)) {
		return true
	}
	errText := fieldError(fields)
	switch {
	case strings.HasSuffix(entry.Message, " since there are still pending configuration changes to apply") &&
		strings.Contains(entry.Message, " cannot campaign at term "):
		// raft's "<id> cannot campaign at term 1": a new member's first election timer (50 ms on
		// its own) can fire before the configuration change that makes it a member is applied,
		// which takes milliseconds; the next timer elects it.
		return true
	case strings.Contains(errText, "missing term information"):
		// On a new data dir the storage version monitor runs before the first raft entry is
		// applied; it succeeds on its next round.
		return entry.Message == "failed to update storage version" || entry.Message == "Failed to detect schema version"
	case closing:
		// Close shuts the listeners, and every serving goroutine reports it; it cancels the streams
		// to the peers, whose ends report every peer as inactive.
		return strings.Contains(errText, "use of closed network connection") ||
			strings.Contains(errText, "server closed") || strings.Contains(errText, "Server closed") ||
			(entry.Message == "peer became inactive (message send to peer failed)" && strings.Contains(errText, "context canceled"))
	}
	return false
}

// errorContains is a condition on the entry's "error" field.
func errorContains(s string) func([]zapcore.Field) bool {
	return func(fields []zapcore.Field) bool { return strings.Contains(fieldError(fields), s) }
}

// durationBelow is true when the duration field key is there and under limit.
func durationBelow(key string, limit time.Duration) func([]zapcore.Field) bool {
	return func(fields []zapcore.Field) bool {
		d, ok := fieldDuration(fields, key)
		return ok && d < limit
	}
}

// fieldError returns the text of the "error" field, if there is one.
func fieldError(fields []zapcore.Field) string {
	for _, f := range fields {
		if f.Key != "error" {
			continue
		}
		if err, ok := f.Interface.(error); ok && err != nil {
			return err.Error()
		}
		return f.String
	}
	return ""
}

// fieldDuration returns the value of a zap.Duration field.
func fieldDuration(fields []zapcore.Field, key string) (time.Duration, bool) {
	for _, f := range fields {
		if f.Key == key && f.Type == zapcore.DurationType {
			return time.Duration(f.Integer), true
		}
	}
	return 0, false
}
