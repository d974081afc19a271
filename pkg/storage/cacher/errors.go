package cacher

import (
	"fmt"

	"github.com/apictl/apictl/pkg/storage"
)

// expiredError is the Expired error of a watch the window cannot serve. Its message is kube's watch
// cache's, "too old resource version: N (M)", which clients and people know; the *storage.StorageError
// it wraps carries the code (storage.IsExpired sees it), the revision asked for and the oldest one the
// cache can serve. Handlers should show err.Error(), not the StorageError's own message, which is
// etcd's.
type expiredError struct {
	se *storage.StorageError
	// msg, when set, replaces kube's message.
	msg string
}

func (e *expiredError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("too old resource version: %d (%d)", e.se.ResourceVersion, e.se.CurrentRevision)
}

func (e *expiredError) Unwrap() error { return e.se }

func expired(key string, rev, oldest int64) error {
	return &expiredError{se: &storage.StorageError{Code: storage.Expired, Op: "watch", Key: key,
		ResourceVersion: rev, CurrentRevision: oldest}}
}

// reset is the Expired error of a watch at rev when etcd's revision went back to listed.
func reset(key string, rev, listed int64) error {
	return &expiredError{
		se: &storage.StorageError{Code: storage.Expired, Op: "watch", Key: key, ResourceVersion: rev, CurrentRevision: listed},
		msg: fmt.Sprintf("the storage's revision went back from %d to %d (was etcd restored from a backup?): "+
			"resourceVersion %d is not valid any more; list again", rev, listed, rev),
	}
}
