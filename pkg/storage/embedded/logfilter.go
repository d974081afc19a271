package embedded

import (
	"strings"

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

// expected reports whether an entry etcd logs as a warning or an error is a normal part of the
// embedded etcd's life, to be logged at debug level instead.
func expected(entry zapcore.Entry, fields []zapcore.Field, closing bool) bool {
	if notices[entry.Message] {
		return true
	}
	errText := fieldError(fields)
	switch {
	case strings.Contains(errText, "missing term information"):
		// On a new data dir the storage version monitor runs before the first raft entry is
		// applied; it succeeds on its next round.
		return entry.Message == "failed to update storage version" || entry.Message == "Failed to detect schema version"
	case closing:
		// Close shuts the listeners, and every serving goroutine reports it.
		return strings.Contains(errText, "use of closed network connection") ||
			strings.Contains(errText, "server closed") || strings.Contains(errText, "Server closed")
	}
	return false
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
