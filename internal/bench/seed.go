package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// seedConcurrency is how many requests at once fill the server: enough to hide fsync latency.
const seedConcurrency = 32

// parallel runs do(ctx, i) for every i in [0, n) on up to workers goroutines and returns the first
// error; after one, the remaining calls are skipped.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := do(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// createNamespace creates ns; one that exists already is fine.
func createNamespace(ctx context.Context, h httpTarget, ns string) error {
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)
	if err := createOnce(ctx, h, "/api/v1/namespaces", body); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// createOnce POSTs body to path; an object that exists already (409) is fine.
func createOnce(ctx context.Context, h httpTarget, path string, body []byte) error {
	err := h.do(ctx, http.MethodPost, path, body, http.StatusCreated, nil)
	if se := (*statusError)(nil); errors.As(err, &se) && se.Code == http.StatusConflict {
		return nil
	}
	return err
}

// createConfigMaps creates n ConfigMaps in ns named by name(i).
func createConfigMaps(ctx context.Context, h httpTarget, ns string, n int, name func(int) string) error {
	return createObjects(ctx, h, configMapKind(), ns, n, name)
}

// createObjects creates n objects of kind in ns named by name(i).
func createObjects(ctx context.Context, h httpTarget, kind objectKind, ns string, n int, name func(int) string) error {
	path := kind.collection(ns)
	err := parallel(ctx, n, seedConcurrency, func(ctx context.Context, i int) error {
		return h.do(ctx, http.MethodPost, path, kind.object(ns, name(i), "", 0), http.StatusCreated, nil)
	})
	if err != nil {
		return fmt.Errorf("creating %d objects in %s: %w", n, path, err)
	}
	return nil
}

// seed fills the server for the comparison: the listed objects and one object per update worker.
func seed(ctx context.Context, h httpTarget, listed, updaters int) error {
	for _, ns := range []string{listNamespace, writeNamespace} {
		if err := createNamespace(ctx, h, ns); err != nil {
			return err
		}
	}
	if err := createConfigMaps(ctx, h, listNamespace, listed, listName); err != nil {
		return err
	}
	return createConfigMaps(ctx, h, writeNamespace, updaters, updateName)
}

// listedCountError is checkListed's error for a list with another number of items than wanted.
type listedCountError struct {
	path      string
	got, want int
}

func (e *listedCountError) Error() string {
	return fmt.Sprintf("GET %s: %d items, want the %d seeded ones", e.path, e.got, e.want)
}

// checkListed lists path once, checks it returns the want seeded items, and returns the names of the
// others: besides the seeded objects a namespace holds what the server's controllers put there (the
// kube-root-ca.crt ConfigMap, as kube-controller-manager does), which LIST, etcd's range and kubectl's
// table carry alike.
func checkListed(ctx context.Context, h httpTarget, path string, want int) ([]string, error) {
	var buf bytes.Buffer
	if err := h.do(ctx, http.MethodGet, path, nil, http.StatusOK, &buf); err != nil {
		return nil, err
	}
	var l listCount
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	seeded := 0
	var others []string
	for _, item := range l.Items {
		if strings.HasPrefix(item.Metadata.Name, listNamePrefix) {
			seeded++
		} else {
			others = append(others, item.Metadata.Name)
		}
	}
	if seeded != want {
		return nil, &listedCountError{path: path, got: seeded, want: want}
	}
	return others, nil
}

// clearWrites deletes, directly in etcd, the objects the measurements wrote to writeNamespace: many
// thousands in a full run, which a server started afterwards would load and carry.
func clearWrites(ctx context.Context, cli *clientv3.Client) error {
	prefix := serverPrefix(writeNamespace)
	if _, err := cli.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("deleting the measurements' objects under %s: %w", prefix, err)
	}
	return nil
}

// listSettleTimeout bounds the wait for a LIST with resourceVersion=0, which may be served from a
// cache that follows etcd, to see all seeded objects.
const listSettleTimeout = 10 * time.Second

// verify checks, before anything is measured, that both sides see the same data: LIST (with and
// without resourceVersion=0) returns exactly the seeded objects, etcd's range of the server's prefix
// has as many keys, and GET's key is where the harness expects it. It returns the stored value of
// GET's object, which etcd's writes then carry, and the names of the server's own objects in the
// listed namespace.
func verify(ctx context.Context, h httpTarget, cli *clientv3.Client, listed int) (string, []string, error) {
	var others []string
	for _, query := range []string{"", "?resourceVersion=0"} {
		path := configMapsPath(listNamespace) + query
		deadline := time.Now().Add(listSettleTimeout)
		for {
			var err error
			others, err = checkListed(ctx, h, path, listed)
			if err == nil {
				break
			}
			if ce := (*listedCountError)(nil); !errors.As(err, &ce) || time.Now().After(deadline) {
				return "", nil, err
			}
			select {
			case <-ctx.Done():
				return "", nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	prefix := serverPrefix(listNamespace)
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return "", nil, fmt.Errorf("counting the keys under %s: %w", prefix, err)
	}
	if total := listed + len(others); resp.Count != int64(total) {
		return "", nil, fmt.Errorf("etcd has %d keys under %s, want the %d the server listed: the server's key layout is not the harness's", resp.Count, prefix, total)
	}
	key := serverKey(listNamespace, getName)
	got, err := cli.Get(ctx, key)
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(got.Kvs) != 1 {
		return "", nil, errors.New("etcd has no key " + key + ": the server's key layout is not the harness's")
	}
	return string(got.Kvs[0].Value), others, nil
}
