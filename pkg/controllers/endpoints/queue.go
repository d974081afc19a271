package endpoints

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// maxRetries is how often kube's controllers retry a key before they drop it until its next change.
const maxRetries = 15

// workers is how many keys a controller syncs at once (kube-controller-manager's --concurrent-*-syncs
// default to 5; apictl's objects never wait on pods).
const workers = 2

// handler is an event handler on a shared informer, for one run: enqueue takes a namespace/name key.
type handler struct {
	informer cache.SharedIndexInformer
	funcs    func(enqueue func(key string)) cache.ResourceEventHandler
}

// runQueue is one run of a controller, as kube's controllers run: the handlers feed a rate-limited
// queue of keys, and workers sync each key, retrying failures with backoff up to maxRetries. It
// starts once every handler has seen its informer's objects, and returns when ctx ends, with its
// handlers removed and its workers stopped. Nothing outlives the run: the next one, after this
// replica wins the controllers' Lease back, starts afresh. started, when not nil, runs once the
// handlers have synced (kube's checkLeftoverEndpoints).
func runQueue(ctx context.Context, name string, log *slog.Logger, handlers []handler, syncKey func(ctx context.Context, key string) error,
	started func(enqueue func(key string))) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	defer q.ShutDown()
	var hasSynced []cache.InformerSynced
	for _, h := range handlers {
		reg, err := h.informer.AddEventHandler(h.funcs(q.Add))
		if err != nil {
			log.Error("adding an event handler", "err", err)
			return
		}
		defer func() { _ = h.informer.RemoveEventHandler(reg) }()
		hasSynced = append(hasSynced, reg.HasSynced)
	}
	if !synced.Wait(ctx, hasSynced...) {
		return
	}
	if started != nil {
		started(q.Add)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// The queue shuts down before the wait: it is what ends the workers.
	defer q.ShutDown()
	for range workers {
		wg.Go(func() {
			for {
				key, quit := q.Get()
				if quit {
					return
				}
				err := syncKey(ctx, key)
				switch {
				case err == nil:
					q.Forget(key)
				case q.NumRequeues(key) < maxRetries:
					log.Debug("syncing failed; retrying", "key", key, "err", err)
					q.AddRateLimited(key)
				default:
					log.Warn("syncing failed too often; dropped until the next change", "key", key, "err", err)
					q.Forget(key)
				}
				q.Done(key)
			}
		})
	}
	<-ctx.Done()
}

// keyOf is an object's namespace/name key, tombstones included; "" when it has none.
func keyOf(obj any) string {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return ""
	}
	return key
}

// enqueueObject returns a handler function that enqueues its object's key.
func enqueueObject(enqueue func(string)) func(obj any) {
	return func(obj any) {
		if key := keyOf(obj); key != "" {
			enqueue(key)
		}
	}
}

// recorder writes a controller's events as kube's controllers do, until stop is called.
func recorder(ctx context.Context, client kubernetes.Interface, component string) (rec record.EventRecorder, stop func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}), b.Shutdown
}

// tombstone unwraps what a delete handler gets: the object, or the last state an informer knew.
func tombstone[T any](obj any) (T, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("expected a %T, got %T", zero, obj)
	}
	return v, nil
}

// errStale says the informer's cache is behind this controller's own writes: the key is retried.
var errStale = errors.New("the informer cache is out of date")
