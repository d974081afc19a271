package etcd3

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage"
)

// maxListBatch bounds how many keys one range request of a filtered list fetches.
const maxListBatch = 10000

// listPlan says where a list starts and which revision it reads.
type listPlan struct {
	// start is the first key to read.
	start string
	// revision pins the read; 0 reads the latest.
	revision int64
	// minRevision, with revision 0, is the oldest revision the read may return.
	minRevision int64
	// serializable, with revision 0, accepts the member's own latest state ("0").
	serializable bool
	// continued says the list goes on from a continue token.
	continued bool
}

// List reads the keys under prefix in key order, one page of opts.Limit matches at a time (all of
// them with no limit). Every page of one list reads at the revision of its first page, which the
// continue token carries. A filtered page keeps reading until it is full or the range ends, so it is
// never short while more matches exist.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.ListResult, error) {
	prefix, err := rangePrefix("list", prefix)
	if err != nil {
		return nil, err
	}
	if opts.Limit < 0 {
		return nil, invalid("list: limit %d is negative", opts.Limit)
	}
	plan, err := planList(prefix, opts)
	if err != nil {
		return nil, err
	}
	return s.list(ctx, prefix, plan, opts)
}

// planList turns the API's resourceVersion, resourceVersionMatch and continue into a plan, refusing
// the combinations the API forbids (the handlers should have already).
func planList(prefix string, opts storage.ListOptions) (listPlan, error) {
	rv, match := opts.ResourceVersion, opts.ResourceVersionMatch
	if match != storage.MatchUnset && match != storage.MatchExact && match != storage.MatchNotOlderThan {
		return listPlan{}, invalid("list: resourceVersionMatch %q is not one of %q, %q", match, storage.MatchExact, storage.MatchNotOlderThan)
	}
	if opts.Continue != "" {
		// The watch cache's tokens are accepted too: it hands its lists to the store while it is not
		// serving, and the token's position is the same list's. The token is checked first, as in kube.
		tok, err := storage.DecodeContinue(opts.Continue, prefix)
		if err != nil {
			return listPlan{}, err
		}
		if (rv != "" && rv != "0") || match != storage.MatchUnset {
			return listPlan{}, &storage.StorageError{Code: storage.Invalid, Op: "list", Key: prefix, Err: storage.ErrContinueWithResourceVersion}
		}
		return listPlan{start: prefix + tok.Start, revision: max(tok.Revision, 0), continued: true}, nil
	}
	plan := listPlan{start: prefix}
	switch rv {
	case "":
		if match != storage.MatchUnset {
			return listPlan{}, invalid("list: resourceVersionMatch is forbidden unless resourceVersion is provided")
		}
	case "0":
		if match == storage.MatchExact {
			return listPlan{}, invalid("list: resourceVersionMatch %q is forbidden for resourceVersion \"0\"", match)
		}
		plan.serializable = true
	default:
		n, err := storage.ParseResourceVersion(rv)
		if err != nil {
			return listPlan{}, err
		}
		// A limited list with a resourceVersion and no match reads exactly at it, as kube does.
		if match == storage.MatchExact || (match == storage.MatchUnset && opts.Limit > 0) {
			plan.revision = n
		} else {
			plan.minRevision = n
		}
	}
	return plan, nil
}

func (s *Store) list(ctx context.Context, prefix string, plan listPlan, opts storage.ListOptions) (*storage.ListResult, error) {
	rangeEnd := clientv3.GetPrefixRangeEnd(prefix)
	limit, filter := opts.Limit, opts.Filter
	// One list reads one resource: its transformer is chosen once.
	t := s.codec.transformer(prefix)
	var dc *keyContext
	batch := limit
	key := plan.start
	revision := plan.revision
	result := &storage.ListResult{}
	if limit > 0 {
		result.Items = make([]storage.KeyValue, 0, min(limit, maxListBatch))
	}
	for first := true; ; first = false {
		resp, err := s.readBatch(ctx, key, rangeEnd, batch, revision, plan, first)
		if err != nil {
			return nil, s.listError(ctx, prefix, plan, revision, err)
		}
		if revision == 0 {
			revision = resp.Header.Revision
		}
		for i, kv := range resp.Kvs {
			var item storage.KeyValue
			if needsDecode(t, kv.Value) {
				if dc == nil {
					dc = &keyContext{prefix: s.prefix}
				}
				if item, err = s.codec.decodeListItem(ctx, t, kv, dc); err != nil {
					return nil, err
				}
			} else {
				item = keyValue(kv)
			}
			if filter != nil {
				ok, err := filter(item)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			result.Items = append(result.Items, item)
			if limit > 0 && int64(len(result.Items)) == limit {
				if i < len(resp.Kvs)-1 || resp.More {
					next := storage.ContinueToken{Revision: revision, Start: item.Key[len(prefix):] + "\x00"}
					result.Continue = storage.EncodeContinue(prefix, next)
					if filter == nil {
						remaining := resp.Count - int64(i+1)
						result.RemainingItemCount = &remaining
					}
				}
				result.Revision = revision
				return result, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			result.Revision = revision
			return result, nil
		}
		// Only a filter leaves a page short with more keys to read: read on, in growing batches.
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if batch < maxListBatch {
			batch = min(2*batch, maxListBatch)
		}
	}
}

// readBatch reads up to batch keys (all with 0) from key to rangeEnd. The first read of a list that
// is not pinned to a revision chooses it: the latest (quorum), the member's latest ("0"), or the
// latest that is not older than the plan's minimum.
func (s *Store) readBatch(ctx context.Context, key, rangeEnd string, batch, revision int64, plan listPlan, first bool) (*clientv3.GetResponse, error) {
	opts := []clientv3.OpOption{clientv3.WithRange(rangeEnd)}
	if batch > 0 {
		opts = append(opts, clientv3.WithLimit(batch))
	}
	if revision > 0 {
		return s.kv.Get(ctx, key, append(opts, clientv3.WithRev(revision))...)
	}
	switch {
	case first && plan.minRevision > 0:
		return s.getNotOlderThan(ctx, "list", key, plan.minRevision, opts...)
	case plan.serializable:
		opts = append(opts, clientv3.WithSerializable())
	}
	return s.kv.Get(ctx, key, opts...)
}

// listError maps a compacted revision to Expired (with a fresh token that goes on from the same key
// at the latest revision when the list was continued) and a future one to TooLargeResourceVersion.
func (s *Store) listError(ctx context.Context, prefix string, plan listPlan, revision int64, err error) error {
	switch {
	case isCompacted(err):
		expired := &storage.StorageError{Code: storage.Expired, Op: "list", Key: prefix, ResourceVersion: revision, Err: err}
		if plan.continued {
			expired.Continue = storage.EncodeContinue(prefix, storage.ContinueToken{Revision: storage.ContinueLatest, Start: plan.start[len(prefix):]})
		}
		return expired
	case isFutureRev(err):
		current, cerr := s.CurrentRevision(ctx)
		if cerr != nil {
			return cerr
		}
		return &storage.StorageError{Code: storage.TooLargeResourceVersion, Op: "list", Key: prefix,
			ResourceVersion: revision, CurrentRevision: current}
	}
	return s.interpret("list", prefix, err)
}

// rangePrefix checks a list or watch prefix and ends it in "/", so that "configmaps/a" does not also
// cover "configmaps/ab".
func rangePrefix(op, prefix string) (string, error) {
	if prefix == "" {
		return "", invalid("%s: the key prefix is empty; use a resource prefix such as configmaps/", op)
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix, nil
}
