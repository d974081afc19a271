// Package storage keeps API objects in etcd. It stores bytes, not objects: values are the JSON the
// handlers wrote, so that reads can stream stored bytes without decoding them. An object's
// resourceVersion is the etcd mod revision of its key; a list's is the revision it was read at.
//
// Keys are plain strings chosen by the caller (the handlers use <resource>/<namespace>/<name> for the
// core group and <group>/<resource>/<namespace>/<name> otherwise); the store prepends --etcd-prefix.
package storage

import (
	"context"
	"time"
)

// KeyValue is one stored object.
type KeyValue struct {
	// Key is the caller's key, without the store's prefix.
	Key string
	// Value is the stored JSON.
	Value []byte
	// ModRevision is the etcd revision that last wrote the key: the object's resourceVersion.
	ModRevision int64
	// RVAt and RVLast, when RVAt is above 0, record where the resourceVersion member goes in Value
	// (ResourceVersionPlace; WithPlace sets them), so that a value read many times, as the watch
	// cache's are, is scanned once rather than at every response. A changed Value must not keep them.
	RVAt   int32
	RVLast bool
}

// ResourceVersionMatch qualifies a list's resourceVersion, as the API's resourceVersionMatch does.
type ResourceVersionMatch string

// The values of resourceVersionMatch.
const (
	MatchUnset        ResourceVersionMatch = ""
	MatchNotOlderThan ResourceVersionMatch = "NotOlderThan"
	MatchExact        ResourceVersionMatch = "Exact"
)

// GetOptions say how fresh a read must be.
type GetOptions struct {
	// ResourceVersion is the API's: "" reads the latest (quorum), "0" any (serializable), "N" not older
	// than N (a store that has not seen N yet returns a TooLargeResourceVersion error).
	ResourceVersion string
}

// Filter decides whether a stored object belongs in a result; it is how label and field selectors reach
// the store without the store knowing the encoding. A nil Filter matches everything.
type Filter func(kv KeyValue) (bool, error)

// ListOptions select and page a list.
type ListOptions struct {
	// ResourceVersion and ResourceVersionMatch follow the API's list semantics.
	ResourceVersion      string
	ResourceVersionMatch ResourceVersionMatch
	// Limit is the page size; 0 means everything. Pages are full while more matches exist.
	Limit int64
	// Continue is a token from a previous page.
	Continue string
	Filter   Filter
	// Stream says the caller reads the items once, in order, and lets the store hand them over one at a
	// time (ListResult.Stream) rather than gathered in Items. A store that keeps its data in memory
	// then answers an unpaged list of any size without a slice of every item: a million items
	// gathered cost 56 MB per LIST in KeyValues alone (issue 22). Stores may ignore it.
	Stream bool
}

// ListResult is one page.
type ListResult struct {
	// Items are the page's objects, or nil when Stream hands them over.
	Items []KeyValue
	// Stream, when set (only for ListOptions.Stream), calls fn with every item in order until fn
	// returns an error, and returns that error or the store's own; it may be called once.
	Stream func(fn func(KeyValue) error) error
	// Revision is the list's resourceVersion: the revision every page of this list was read at.
	Revision int64
	// Continue is the token for the next page, empty on the last one.
	Continue string
	// RemainingItemCount counts the keys after this page when no filter hides any; nil otherwise.
	RemainingItemCount *int64
}

// UpdateFunc computes an object's next value from its current one. The store calls it again with the
// fresh value when a concurrent write wins the compare-and-swap. Returning the current bytes unchanged
// skips the write. Returning an error aborts the update with that error.
type UpdateFunc func(current KeyValue) (next []byte, err error)

// UpdateOptions qualify GuaranteedUpdate.
type UpdateOptions struct {
	// ExpectedRevision, when not 0, is the resourceVersion the client sent: if the object has moved on,
	// the update fails with a Conflict error instead of retrying.
	ExpectedRevision int64
	// TTL, when positive, attaches the written key to a lease of that length.
	TTL time.Duration
	// Cached, when set, is a recent value of the key (a watch cache's). The store tries the
	// compare-and-swap on it first and reads the key only if that fails, saving a read per update;
	// an error or a no-op that tryUpdate returns for the cached value is confirmed on a fresh one.
	Cached *KeyValue
}

// CheckFunc vets the current object before a delete (preconditions such as uid and resourceVersion).
// Returning an error aborts the delete with that error.
type CheckFunc func(current KeyValue) error

// EventType names a watch event, with the API's spelling.
type EventType string

// The watch event types the store produces. Bookmarks and errors about the request itself are the
// handlers' business.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	// Error carries Err: the watch has ended (for example, its revision was compacted).
	Error EventType = "ERROR"
	// Progress carries only Revision: every change under the prefix up to it has been delivered.
	// Only watches opened with WatchOptions.ProgressNotify receive it.
	Progress EventType = "PROGRESS"
)

// Event is one change under a watched prefix.
type Event struct {
	Type EventType
	// Object is the new state; for Deleted, the last state before the delete with the delete's revision.
	Object KeyValue
	// Revision is the etcd revision of the change.
	Revision int64
	// Err is set on Error events.
	Err error
}

// WatchOptions say where a watch starts.
type WatchOptions struct {
	// Revision: changes strictly after it are delivered. 0 means "from now".
	Revision int64
	// Filter, when set, drops events whose object does not match. Transitions (an object entering or
	// leaving the filter) are the watch cache's business, not the raw store's.
	Filter Filter
	// ProgressNotify asks for Progress events, sent when a ProgressRequester store is asked for them:
	// a watch cache uses them to learn that it is current without a change under its prefix.
	ProgressNotify bool
}

// ProgressRequester is a store whose watches can report their progress on request. After
// RequestWatchProgress, each watch opened with ProgressNotify receives a Progress event at a revision
// not older than the store's revision when the request was made, once it has delivered everything
// before it. The store may drop a request it cannot answer yet (a watch still catching up): callers
// ask again until the revision they wait for arrives.
type ProgressRequester interface {
	RequestWatchProgress(ctx context.Context) error
}

// Store is what the REST handlers need from storage.
type Store interface {
	// Create writes value at key if the key does not exist, else returns an AlreadyExists error. A
	// positive ttl attaches a lease, so the key expires.
	Create(ctx context.Context, key string, value []byte, ttl time.Duration) (KeyValue, error)
	// Get reads one key; NotFound if it does not exist.
	Get(ctx context.Context, key string, opts GetOptions) (KeyValue, error)
	// List reads the keys under prefix (which should end in "/"), in key order.
	List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error)
	// GuaranteedUpdate reads key, applies tryUpdate and writes the result with compare-and-swap on the
	// mod revision, retrying on conflicts it caused itself; NotFound if the key does not exist.
	GuaranteedUpdate(ctx context.Context, key string, tryUpdate UpdateFunc, opts UpdateOptions) (KeyValue, error)
	// Delete removes key after check approves the current value, with compare-and-swap; it returns the
	// deleted value, with ModRevision set to the revision of the delete.
	Delete(ctx context.Context, key string, check CheckFunc) (KeyValue, error)
	// Watch streams the changes under prefix until ctx ends or an Error event closes the channel.
	Watch(ctx context.Context, prefix string, opts WatchOptions) (<-chan Event, error)
	// CurrentRevision returns etcd's latest revision (a quorum read): not older than any write that
	// completed before the call.
	CurrentRevision(ctx context.Context) (int64, error)
	// Healthy checks that etcd answers within the store's health-check timeout.
	Healthy(ctx context.Context) error
	// Close releases the client. The store is unusable afterwards.
	Close() error
}
