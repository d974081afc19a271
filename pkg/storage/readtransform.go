package storage

import (
	"context"
)

// ReadTransform rewrites a stored value as reads see it; it must not change what it is given. A value
// it cannot rewrite is read as stored: the reader's own decoding reports what is wrong with it, and
// one bad object does not keep a watch cache from filling.
type ReadTransform func(value []byte) ([]byte, error)

// WithReadTransform returns store with every value it reads (gets, lists, watch events) passed
// through transform, and writes passed through unchanged. Given to a watch cache, the transform
// runs once per change of an object, not once per read: custom resources get the defaults of their
// schema this way, as kube's decoder applies them to every object it reads, without decoding on
// every GET and LIST. A filter given to List or Watch sees the transformed value.
func WithReadTransform(store Store, transform ReadTransform) Store {
	return &readTransformed{Store: store, transform: transform}
}

type readTransformed struct {
	Store
	transform ReadTransform
}

func (r *readTransformed) kv(kv KeyValue) KeyValue {
	if v, err := r.transform(kv.Value); err == nil {
		kv.Value, kv.RVAt = v, 0
	}
	return kv
}

func (r *readTransformed) filter(f Filter) Filter {
	if f == nil {
		return nil
	}
	return func(kv KeyValue) (bool, error) { return f(r.kv(kv)) }
}

func (r *readTransformed) Get(ctx context.Context, key string, opts GetOptions) (KeyValue, error) {
	kv, err := r.Store.Get(ctx, key, opts)
	if err != nil {
		return kv, err
	}
	return r.kv(kv), nil
}

func (r *readTransformed) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	opts.Filter = r.filter(opts.Filter)
	res, err := r.Store.List(ctx, prefix, opts)
	if err != nil {
		return res, err
	}
	out := *res
	out.Items = make([]KeyValue, len(res.Items))
	for i, kv := range res.Items {
		out.Items[i] = r.kv(kv)
	}
	return &out, nil
}

func (r *readTransformed) Watch(ctx context.Context, prefix string, opts WatchOptions) (<-chan Event, error) {
	opts.Filter = r.filter(opts.Filter)
	in, err := r.Store.Watch(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan Event)
	go func() {
		defer close(out)
		for ev := range in {
			if ev.Type == Added || ev.Type == Modified || ev.Type == Deleted {
				ev.Object = r.kv(ev.Object)
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				// The wrapped watch ends with ctx too: drain it so that its goroutine can finish.
				for range in {
				}
				return
			}
		}
	}()
	return out, nil
}

// RequestWatchProgress passes progress requests on, so that a watch cache on top still learns it is
// current.
func (r *readTransformed) RequestWatchProgress(ctx context.Context) error {
	if p, ok := r.Store.(ProgressRequester); ok {
		return p.RequestWatchProgress(ctx)
	}
	return nil
}
