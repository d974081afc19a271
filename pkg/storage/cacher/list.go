package cacher

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/storage"
)

// continueWait bounds how long a continued list waits for the cache to reach the token's revision
// (a token from another server's cache) before the store answers it.
const continueWait = 100 * time.Millisecond

// List implements storage.Store.List. It answers from memory when the API lets it return any state
// not older than the cache's:
//   - resourceVersion unset (the latest, a consistent read) once the cache has reached etcd's current
//     revision, which costs etcd one revision read shared by concurrent readers (see consistent);
//   - resourceVersion "0" (any state), with resourceVersionMatch unset or NotOlderThan, without asking etcd;
//   - resourceVersion "N" with NotOlderThan, or with no match and no limit (the API's "not older
//     than"), once the cache has reached N;
//   - a continue token the cacher issued.
//
// The rest goes to the wrapped store: a consistent read the cache cannot catch up with in time, Exact,
// a limited "N" without a match (also exact), the store's own continue tokens, prefixes outside the
// cacher's, every list after the cache stopped, and, before it is ready, paged lists without a filter.
// Other lists wait for it to be ready, at most WaitTimeout, then fail with Initializing.
//
// Paging is the etcd3 store's: items sorted by key, filtered by opts.Filter, pages of opts.Limit
// matches with a continue token when keys remain and RemainingItemCount when no filter hides any.
// That is what kube's watch cache does since 1.31; before, it ignored the limit of a
// resourceVersion="0" list and returned everything. A token holds the list's revision, and its next
// page is answered from memory at that revision while the window holds every change since. Past the
// window, the store reads the page at that revision exactly (scanning the prefix up to the token's
// key); if etcd has compacted it too, the error is Expired with a token that goes on from the same key
// at the latest revision, as the store's.
func (c *Cacher) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.ListResult, error) {
	sub, ok := c.within(prefix)
	if !ok || c.isStopped() || opts.Limit < 0 {
		return c.store.List(ctx, prefix, opts)
	}
	if !c.isReady() {
		// While the cache fills (a million objects take seconds), etcd answers what it can answer a
		// page at a time: a paged list without selectors, or a continued one of its own. The rest
		// waits for the cache, as kube's watch cache has it since KEP-4568, rather than making etcd
		// read and the server hold a whole resource, or scan it for a few matches, for each.
		tok, _ := storage.DecodeContinue(opts.Continue, sub)
		if (opts.Limit > 0 && opts.Filter == nil) || (opts.Continue != "" && tok.Source != continueSource) {
			return c.store.List(ctx, prefix, opts)
		}
		if err := c.waitReady(ctx, "list"); err != nil {
			return nil, err
		}
	}
	rv, match := opts.ResourceVersion, opts.ResourceVersionMatch
	if opts.Continue != "" {
		tok, err := storage.DecodeContinue(opts.Continue, sub)
		switch {
		case tok.Source != continueSource:
			// The store's token, or none at all: the store answers (or refuses) it.
			return c.store.List(ctx, prefix, opts)
		case err != nil:
			return nil, err
		case (rv != "" && rv != "0") || match != storage.MatchUnset:
			return nil, &storage.StorageError{Code: storage.Invalid, Op: "list", Key: sub, Err: storage.ErrContinueWithResourceVersion}
		}
		return c.continueList(ctx, sub, tok, opts)
	}
	switch {
	case rv == "" && match == storage.MatchUnset:
		fresh, err := c.consistent(ctx)
		if err != nil {
			return nil, err
		}
		if fresh {
			return c.listAt(c.view(), sub, sub, opts)
		}
	case rv == "0" && (match == storage.MatchUnset || match == storage.MatchNotOlderThan):
		return c.listAt(c.view(), sub, sub, opts)
	case rv != "" && rv != "0" && (match == storage.MatchNotOlderThan || (match == storage.MatchUnset && opts.Limit == 0)):
		if n, err := storage.ParseResourceVersion(rv); err == nil && c.revision() >= n {
			return c.listAt(c.view(), sub, sub, opts)
		}
	}
	return c.store.List(ctx, prefix, opts)
}

// Get implements storage.Store.Get: resourceVersion "0", "N" once the cache has reached N, and "" (the
// latest) once the cache has reached etcd's current revision are answered from memory; keys outside
// the cacher's prefix, a latest read the cache cannot catch up with in time, and every get before the
// cache is ready or after it stopped go to the wrapped store.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.KeyValue, error) {
	if !strings.HasPrefix(key, c.prefix) || !c.serving() {
		return c.store.Get(ctx, key, opts)
	}
	switch opts.ResourceVersion {
	case "":
		fresh, err := c.consistent(ctx)
		if err != nil {
			return storage.KeyValue{}, err
		}
		if !fresh {
			return c.store.Get(ctx, key, opts)
		}
	case "0":
	default:
		n, err := storage.ParseResourceVersion(opts.ResourceVersion)
		if err != nil || c.revision() < n {
			return c.store.Get(ctx, key, opts)
		}
	}
	c.mu.RLock()
	v := c.index.get(key)
	c.mu.RUnlock()
	if v == nil {
		return storage.KeyValue{}, &storage.StorageError{Code: storage.NotFound, Op: "get", Key: key}
	}
	return v.kv, nil
}

// continueSource marks the cacher's continue tokens, which it answers itself; the store's it passes on.
// The store answers the cacher's too, while the cacher is not serving.
const continueSource = "watchcache"

// encodeContinue returns the cacher's token for the page of prefix that starts at start (relative to
// prefix), at rev.
func encodeContinue(prefix, start string, rev int64) string {
	return storage.EncodeContinue(prefix, storage.ContinueToken{Revision: rev, Start: start, Source: continueSource})
}

// continueList answers the page after a token of the cacher's.
func (c *Cacher) continueList(ctx context.Context, prefix string, tok storage.ContinueToken, opts storage.ListOptions) (*storage.ListResult, error) {
	start := prefix + tok.Start
	if tok.Revision == storage.ContinueLatest {
		// An inconsistent continue (what an Expired answer hands out) reads the latest, as the store
		// does: at etcd's current revision, not at the cache's last change of this resource.
		fresh, err := c.consistent(ctx)
		if err != nil {
			return nil, err
		}
		if !fresh {
			return c.store.List(ctx, prefix, opts)
		}
		return c.listAt(c.view(), prefix, start, opts)
	}
	if c.revision() < tok.Revision {
		// A token from another server's cache, which is ahead of this one: the change that brought it
		// there may be on its way here.
		ctx, cancel := context.WithTimeout(ctx, continueWait)
		_ = c.waitCache(ctx, tok.Revision)
		cancel()
	}
	if c.compactedPast(tok.Revision) {
		// etcd no longer has the token's revision: the store says so, with a token that goes on.
		return c.listFromStore(ctx, prefix, start, tok, opts)
	}
	if v, ok := c.viewAt(prefix, start, tok.Revision); ok {
		return c.listAt(v, prefix, start, opts)
	}
	return c.listFromStore(ctx, prefix, start, tok, opts)
}

// compactor is a store that knows the revision etcd was last compacted to (etcd3.Store).
type compactor interface {
	CompactedRevision() int64
}

// compactedPast reports whether etcd has been compacted past revision: kube's watch cache drops its
// snapshots older than a compaction, so a continue token from before one expires even while the
// cache's window still holds its revision.
func (c *Cacher) compactedPast(revision int64) bool {
	cs, ok := c.store.(compactor)
	return ok && revision < cs.CompactedRevision()
}

// listFromStore answers a continued list the window cannot: the store reads at the token's revision,
// with a filter that skips the keys before the token's.
func (c *Cacher) listFromStore(ctx context.Context, prefix, start string, tok storage.ContinueToken, opts storage.ListOptions) (*storage.ListResult, error) {
	filter := opts.Filter
	res, err := c.store.List(ctx, prefix, storage.ListOptions{
		ResourceVersion:      strconv.FormatInt(tok.Revision, 10),
		ResourceVersionMatch: storage.MatchExact,
		Limit:                opts.Limit,
		Filter: func(kv storage.KeyValue) (bool, error) {
			if kv.Key < start {
				return false, nil
			}
			if filter == nil {
				return true, nil
			}
			return filter(kv)
		},
	})
	if storage.IsExpired(err) {
		return nil, &storage.StorageError{Code: storage.Expired, Op: "list", Key: prefix, ResourceVersion: tok.Revision,
			Continue: encodeContinue(prefix, tok.Start, storage.ContinueLatest), Err: err}
	}
	return res, err
}

// waitCache waits until the cache reaches rev or ctx ends.
func (c *Cacher) waitCache(ctx context.Context, rev int64) error {
	for {
		c.mu.RLock()
		current, advanced := c.rev, c.advanced
		c.mu.RUnlock()
		if current >= rev {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.stopped:
			return c.stoppedError("list")
		}
	}
}

// view is the cache's state at one revision. over holds, for the keys changed since (in the list's
// range), their version at rev (nil: absent then); keys are over's keys, sorted.
type view struct {
	snap snapshot
	rev  int64
	over map[string]*version
	keys []string
}

// view returns the cache's current state.
func (c *Cacher) view() view {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return view{snap: c.index.snapshot(), rev: c.rev}
}

// viewAt returns the state at rev of the keys in [start, the end of prefix), undoing the window's
// changes since; false if the window does not reach back to rev.
func (c *Cacher) viewAt(prefix, start string, rev int64) (view, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rev > c.rev {
		return view{}, false
	}
	v := view{snap: c.index.snapshot(), rev: rev}
	if rev == c.rev {
		return v, true
	}
	seq, ok := c.window.after(rev)
	if !ok {
		return view{}, false
	}
	end := prefixEnd(prefix)
	v.over = make(map[string]*version)
	// The first change of a key after rev holds its version at rev.
	undo := func(ch *change) {
		if ch.key < start || ch.key >= end {
			return
		}
		if _, seen := v.over[ch.key]; !seen {
			v.over[ch.key] = ch.prev
			v.keys = append(v.keys, ch.key)
		}
	}
	for ; seq < c.window.head; seq++ {
		ch := c.window.at(seq)
		switch {
		case ch.reset:
			return view{}, false
		case ch.gap != nil:
			// The cache jumped from ch.from to ch.rev; it never had a state in between.
			if rev > ch.from {
				return view{}, false
			}
			for _, g := range ch.gap {
				undo(g)
			}
		default:
			undo(ch)
		}
	}
	slices.Sort(v.keys)
	return v, true
}

// listAt reads the page of v that starts at start, under prefix. Errors are the filter's.
func (c *Cacher) listAt(v view, prefix, start string, opts storage.ListOptions) (*storage.ListResult, error) {
	end := prefixEnd(prefix)
	res := &storage.ListResult{Revision: v.rev}
	if opts.Stream && opts.Limit <= 0 {
		// The view is an immutable snapshot: walking it after List returns sees the state at v.rev.
		res.Stream = func(fn func(storage.KeyValue) error) error {
			cur := v.seek(start)
			for {
				item, err := cur.nextMatch(end, opts.Filter)
				if item == nil || err != nil {
					return err
				}
				if err := fn(item.kv); err != nil {
					return err
				}
			}
		}
		return res, nil
	}
	switch {
	case opts.Limit > 0:
		res.Items = make([]storage.KeyValue, 0, min(opts.Limit, 1024))
	case opts.Filter == nil && v.over == nil:
		res.Items = make([]storage.KeyValue, 0, v.snap.count(start, end))
	}
	cur := v.seek(start)
	for {
		item, err := cur.nextMatch(end, opts.Filter)
		if err != nil {
			return nil, err
		}
		if item == nil {
			break
		}
		res.Items = append(res.Items, item.kv)
		if opts.Limit <= 0 || int64(len(res.Items)) < opts.Limit {
			continue
		}
		more := cur.next()
		if more == nil || more.kv.Key >= end {
			break
		}
		res.Continue = encodeContinue(prefix, item.kv.Key[len(prefix):]+"\x00", v.rev)
		if opts.Filter == nil {
			remaining := int64(1 + cur.count(end))
			res.RemainingItemCount = &remaining
		}
		break
	}
	return res, nil
}

// nextMatch returns the next version below end that filter (nil: any) keeps, nil past the last.
func (c *viewCursor) nextMatch(end string, filter storage.Filter) (*version, error) {
	for item := c.next(); item != nil && item.kv.Key < end; item = c.next() {
		if filter == nil {
			return item, nil
		}
		ok, err := filter(item.kv)
		if err != nil || ok {
			return item, err
		}
	}
	return nil, nil
}

// seek returns a cursor at the first key of v not below start.
func (v view) seek(start string) *viewCursor {
	i, _ := slices.BinarySearch(v.keys, start)
	return &viewCursor{base: v.snap.seek(start), over: v.over, keys: v.keys[i:]}
}

// viewCursor walks a view in key order: the snapshot's versions, with those of the keys changed since
// the view's revision replaced by their versions then.
type viewCursor struct {
	base cursor
	over map[string]*version
	keys []string
}

func (c *viewCursor) next() *version {
	for {
		if len(c.keys) == 0 {
			return c.base.next()
		}
		b, k := c.base.peek(), c.keys[0]
		if b != nil && b.kv.Key < k {
			return c.base.next()
		}
		if b != nil && b.kv.Key == k {
			c.base.next()
		}
		c.keys = c.keys[1:]
		if v := c.over[k]; v != nil {
			return v
		}
	}
}

// count returns how many keys below end the cursor has left.
func (c *viewCursor) count(end string) int {
	if c.over == nil {
		return c.base.distance(snapshot{chunks: c.base.chunks}.seek(end))
	}
	n := 0
	for v := c.next(); v != nil && v.kv.Key < end; v = c.next() {
		n++
	}
	return n
}
