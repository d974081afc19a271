// Package extensionauth publishes what the server trusts as the ConfigMap
// kube-system/extension-apiserver-authentication, as kube-apiserver's
// cluster-authentication-trust controller does: extension API servers (aggregated APIs) read the
// client CA and the request-header settings from it to authenticate the requests the aggregation
// layer proxies to them.
package extensionauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// Kube's names.
const (
	Namespace = "kube-system"
	Name      = "extension-apiserver-authentication"
)

// Resync is how often kube re-checks the ConfigMap without an event: it restores edited values and
// publishes reloaded CA bundles.
const Resync = time.Minute

// Config is what the controller needs.
type Config struct {
	// Client reads and writes the ConfigMap and creates kube-system if it is missing.
	Client kubernetes.Interface
	// Required returns what the server trusts now (CA bundles as currently loaded).
	Required func() Info
	// WithUID is the RemoteRequestHeaderUID feature: publish and keep requestheader-uid-headers.
	WithUID bool
	Logger  *slog.Logger
	// Resync overrides Resync (tests).
	Resync time.Duration
}

// Controller keeps the ConfigMap holding the union of what it holds and what this server trusts.
type Controller struct {
	cfg        Config
	informer   cache.SharedIndexInformer
	lister     corev1listers.ConfigMapLister
	configMaps corev1client.ConfigMapsGetter
	namespaces corev1client.NamespacesGetter
	log        *slog.Logger
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller; it watches the ConfigMaps of kube-system alone, as kube does.
func New(cfg Config) (*Controller, error) {
	if cfg.Resync <= 0 {
		cfg.Resync = Resync
	}
	informer := corev1informers.NewConfigMapInformer(cfg.Client, Namespace, 0, cache.Indexers{})
	c := &Controller{
		cfg: cfg, informer: informer, lister: corev1listers.NewConfigMapLister(informer.GetIndexer()),
		configMaps: cfg.Client.CoreV1(), namespaces: cfg.Client.CoreV1(),
		log: cfg.Logger.With("component", "cluster-authentication-trust-controller"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "cluster_authentication_trust_controller"}),
	}
	// As kube: a new or deleted ConfigMap is looked at now, an edited one at the next resync.
	_, err := informer.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: isTheConfigMap,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.Enqueue() },
			DeleteFunc: func(any) { c.Enqueue() },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching configmap %s/%s: %w", Namespace, Name, err)
	}
	return c, nil
}

func isTheConfigMap(obj any) bool {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	return !ok || cm.Name == Name // anything unexpected is worth a look
}

// Enqueue asks for a sync, e.g. when a CA bundle was reloaded.
func (c *Controller) Enqueue() { c.queue.Add(Namespace + "/" + Name) }

// Run watches the ConfigMap and syncs it now, on its events and every Resync until ctx ends; it
// returns when everything it started has stopped.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	wg.Go(func() { c.informer.RunWithContext(ctx) })
	if !synced.Wait(ctx, c.informer.HasSynced) {
		return
	}
	wg.Go(func() {
		for c.processNext(ctx) {
		}
	})
	t := time.NewTicker(c.cfg.Resync)
	defer t.Stop()
	for {
		c.Enqueue()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.Sync(ctx); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("publishing the authentication trust failed; retrying", "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// Sync writes the ConfigMap if it lacks anything the server trusts.
func (c *Controller) Sync(ctx context.Context) error {
	current, err := c.lister.ConfigMaps(Namespace).Get(Name)
	if apierrors.IsNotFound(err) {
		current = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name}}
	} else if err != nil {
		return fmt.Errorf("reading configmap %s/%s from the informer: %w", Namespace, Name, err)
	}
	existing, err := Parse(current.Data, c.cfg.WithUID)
	if err != nil {
		return fmt.Errorf("reading configmap %s/%s: %w", Namespace, Name, err)
	}
	merged, err := Merge(existing, c.cfg.Required(), time.Now())
	if err != nil {
		return err
	}
	want := current.DeepCopy()
	if want.Data, err = Data(merged, c.cfg.WithUID); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(want, current) {
		return nil
	}
	if err := c.ensureNamespace(ctx); err != nil {
		return err
	}
	return c.write(ctx, want)
}

func (c *Controller) ensureNamespace(ctx context.Context) error {
	if _, err := c.namespaces.Namespaces().Get(ctx, Namespace, metav1.GetOptions{}); err == nil {
		return nil
	}
	_, err := c.namespaces.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	return nil
}

// write updates the ConfigMap, or creates it when it is missing. One that grew too large is deleted,
// as kube does, so that the next sync starts over from this server's trust.
func (c *Controller) write(ctx context.Context, cm *corev1.ConfigMap) error {
	client := c.configMaps.ConfigMaps(Namespace)
	_, err := client.Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		cm = cm.DeepCopy()
		cm.ResourceVersion = ""
		if _, err := client.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating configmap %s/%s: %w", Namespace, Name, err)
		}
		// Debug level, as its updates: every new cluster's start creates it, as it creates the
		// default RBAC objects.
		c.log.Debug("published the authentication trust for extension API servers", "configmap", Namespace+"/"+Name)
		return nil
	}
	if apierrors.IsRequestEntityTooLargeError(err) || (apierrors.IsInvalid(err) && strings.Contains(err.Error(), "Too long")) {
		if delErr := client.Delete(ctx, Name, metav1.DeleteOptions{}); delErr != nil {
			return fmt.Errorf("deleting configmap %s/%s, which grew too large: %w", Namespace, Name, errors.Join(err, delErr))
		}
	}
	if err != nil {
		return fmt.Errorf("updating configmap %s/%s: %w", Namespace, Name, err)
	}
	c.log.Debug("updated the authentication trust for extension API servers", "configmap", Namespace+"/"+Name)
	return nil
}
