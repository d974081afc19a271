package storage

import (
	"errors"
	"fmt"
)

// ErrorCode classifies a storage error so that the handlers can pick the API Status for it.
type ErrorCode int

// The codes a Store returns. Errors from a caller's UpdateFunc, CheckFunc or Filter carry none: the
// store returns them unchanged.
const (
	// NotFound: the key does not exist (API 404 NotFound).
	NotFound ErrorCode = iota + 1
	// AlreadyExists: Create found the key taken (API 409 AlreadyExists).
	AlreadyExists
	// Conflict: the client's resourceVersion is stale (API 409 Conflict).
	Conflict
	// Expired: a continue token's or a watch's revision has been compacted (API 410 Expired). For a
	// list, Continue carries a fresh token that goes on from the same key at the latest revision.
	Expired
	// TooLargeResourceVersion: etcd has not reached the requested resourceVersion yet; CurrentRevision
	// says where it is (API 504 Timeout with cause ResourceVersionTooLarge).
	TooLargeResourceVersion
	// InvalidContinue: a continue token that does not decode or belongs to another list (API 400).
	InvalidContinue
	// Invalid: a request the store cannot carry out as asked, such as an unparsable resourceVersion or
	// a continue token combined with a resourceVersion (API 400). The handlers should have refused it.
	Invalid
	// Unavailable: etcd could not be reached or did not answer in time (API 503, or 504 when
	// errors.Is(err, context.DeadlineExceeded)).
	Unavailable
	// TooSlow: a watch's reader fell so far behind that the store stopped buffering for it. The reader
	// may watch again from the last revision it received.
	TooSlow
	// RequestTooLarge: etcd refused a value above its request size limit (1.5 MiB by default; API 413).
	RequestTooLarge
	// NoSpace: a write was refused because etcd's database reached its quota (etcd's NOSPACE alarm) or
	// the disk under the embedded etcd is nearly full. Reads, watches and deletes still work (API 500,
	// with kube's message for an error that is not a Status).
	NoSpace
	// Initializing: a watch cache still filling cannot answer a watch, nor a list it would have to pass
	// whole to etcd (API 429 "storage is (re)initializing" with Retry-After, as kube's since KEP-4568).
	Initializing
)

var codeNames = map[ErrorCode]string{
	NotFound:                "NotFound",
	AlreadyExists:           "AlreadyExists",
	Conflict:                "Conflict",
	Expired:                 "Expired",
	TooLargeResourceVersion: "TooLargeResourceVersion",
	InvalidContinue:         "InvalidContinue",
	Invalid:                 "Invalid",
	Unavailable:             "Unavailable",
	TooSlow:                 "TooSlow",
	RequestTooLarge:         "RequestTooLarge",
	NoSpace:                 "NoSpace",
	Initializing:            "Initializing",
}

// String names the code.
func (c ErrorCode) String() string {
	if name, ok := codeNames[c]; ok {
		return name
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// The messages kube's API server gives for expired lists and watches; clients and people know them.
const (
	msgContinueExpired = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response " +
		"to retrieve the remainder of the results. Continuing with the provided token results in an " +
		"inconsistent list - objects that were created, modified, or deleted between the time the first " +
		"chunk was returned and now may show up in the list."
	msgListExpired  = "The resourceVersion for the provided list is too old."
	msgWatchExpired = "The resourceVersion for the provided watch is too old."
)

// StorageError is the error a Store returns for the conditions listed by ErrorCode. Use the Is*
// predicates or errors.As to inspect it; both see through wrapping.
type StorageError struct {
	Code ErrorCode
	// Op is what the store was doing: "create", "get", "list", "update", "delete", "watch", or
	// "connect" and "health" for the cluster as a whole.
	Op string
	// Key is the caller's key (or list prefix) the error is about.
	Key string
	// ResourceVersion is the revision the caller asked for (Conflict, Expired, TooLargeResourceVersion).
	ResourceVersion int64
	// CurrentRevision is the object's mod revision (Conflict), etcd's current revision
	// (TooLargeResourceVersion) or the compacted revision (Expired).
	CurrentRevision int64
	// Continue is a fresh continue token on an Expired list error; empty otherwise.
	Continue string
	// Err is the cause, when there is one.
	Err error
}

// Error says what happened in words a user of the API can act on. For Expired and
// TooLargeResourceVersion it is kube's message, so that handlers can pass it on.
func (e *StorageError) Error() string {
	switch e.Code {
	case NotFound:
		return fmt.Sprintf("key %q not found", e.Key)
	case AlreadyExists:
		return fmt.Sprintf("key %q already exists", e.Key)
	case Conflict:
		return fmt.Sprintf("key %q has been modified: the request was for resourceVersion %d, the current one is %d",
			e.Key, e.ResourceVersion, e.CurrentRevision)
	case Expired:
		switch {
		case e.Continue != "":
			return msgContinueExpired
		case e.Op == "watch":
			return msgWatchExpired
		default:
			return msgListExpired
		}
	case TooLargeResourceVersion:
		return fmt.Sprintf("Too large resource version: %d, current: %d", e.ResourceVersion, e.CurrentRevision)
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("storage %s error on key %q", e.Code, e.Key)
}

// Unwrap returns the cause.
func (e *StorageError) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *StorageError in err's chain, or 0 if there is none.
func CodeOf(err error) ErrorCode {
	var e *StorageError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// IsNotFound reports whether err says the key does not exist.
func IsNotFound(err error) bool { return CodeOf(err) == NotFound }

// IsAlreadyExists reports whether err says Create found the key taken.
func IsAlreadyExists(err error) bool { return CodeOf(err) == AlreadyExists }

// IsConflict reports whether err says the client's resourceVersion is stale.
func IsConflict(err error) bool { return CodeOf(err) == Conflict }

// IsExpired reports whether err says a continue token's or a watch's revision was compacted.
func IsExpired(err error) bool { return CodeOf(err) == Expired }

// IsTooLargeResourceVersion reports whether err says etcd has not reached the requested revision.
func IsTooLargeResourceVersion(err error) bool { return CodeOf(err) == TooLargeResourceVersion }

// IsInvalidContinue reports whether err says a continue token is not valid for the list.
func IsInvalidContinue(err error) bool { return CodeOf(err) == InvalidContinue }

// IsInvalid reports whether err says the request's options cannot be carried out.
func IsInvalid(err error) bool { return CodeOf(err) == Invalid }

// IsUnavailable reports whether err says etcd could not be reached or did not answer in time.
func IsUnavailable(err error) bool { return CodeOf(err) == Unavailable }

// IsTooSlow reports whether err says a watch's reader fell too far behind.
func IsTooSlow(err error) bool { return CodeOf(err) == TooSlow }

// IsRequestTooLarge reports whether err says etcd refused a value for its size.
func IsRequestTooLarge(err error) bool { return CodeOf(err) == RequestTooLarge }
