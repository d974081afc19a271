package etcd3

import (
	"context"
	"errors"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// revisionReadTimeout bounds one shared read of the current revision; each caller also leaves when
// its own context ends.
const revisionReadTimeout = time.Minute

// CurrentRevision returns etcd's current revision with a quorum read. Concurrent callers share reads:
// a caller joins the next read to start, never one already under way, which may have been answered
// before the caller's own writes. So the result is never older than a write that completed before
// the call, and a thousand consistent reads from the watch caches cost etcd a handful of reads.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	call := s.revisions.join()
	select {
	case <-call.done:
		return call.rev, call.err
	case <-ctx.Done():
		return 0, s.interpret("read the current revision", "", ctx.Err())
	}
}

// readRevision is one quorum read of the revision, for the shared reads.
func (s *Store) readRevision(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, revisionReadTimeout)
	defer cancel()
	resp, err := s.kv.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, s.interpret("read the current revision", "", err)
	}
	return resp.Header.Revision, nil
}

// revisionReads runs one read of the revision at a time, on a goroutine of its own (loop); the
// callers that arrive meanwhile wait together for the next.
type revisionReads struct {
	mu     sync.Mutex
	next   *revisionRead // the read the next callers join; nil until one does
	closed bool
	kick   chan struct{} // tells the loop that next has callers
}

// revisionRead is one read and the callers waiting for it.
type revisionRead struct {
	done chan struct{}
	rev  int64
	err  error
}

func newRevisionReads() *revisionReads {
	return &revisionReads{kick: make(chan struct{}, 1)}
}

// join returns the read the caller waits for.
func (r *revisionReads) join() *revisionRead {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		call := &revisionRead{done: make(chan struct{}), err: errStoreClosed()}
		close(call.done)
		return call
	}
	if r.next == nil {
		r.next = &revisionRead{done: make(chan struct{})}
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return r.next
}

// loop performs the reads callers wait for until ctx ends; then it fails the waiting callers and
// every later one.
func (r *revisionReads) loop(ctx context.Context, read func(context.Context) (int64, error)) {
	defer r.close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		r.mu.Lock()
		call := r.next
		r.next = nil
		r.mu.Unlock()
		if call == nil {
			continue
		}
		call.rev, call.err = read(ctx)
		close(call.done)
	}
}

func (r *revisionReads) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.next != nil {
		r.next.err = errStoreClosed()
		close(r.next.done)
		r.next = nil
	}
}

func errStoreClosed() error {
	return &storage.StorageError{Code: storage.Unavailable, Op: "read the current revision", Err: errors.New("the etcd client is closed")}
}
