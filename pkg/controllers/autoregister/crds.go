package autoregister

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	crdlisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/apictl/apictl/pkg/controllers/synced"
)

// CRDPriority is what kube's crdRegistrationController gives every CRD group version: a low group
// priority, and one version priority so that versions sort kube-like among themselves.
var CRDPriority = Priority{Group: 1000, Version: 100}

// Registration is the part of Controller the CRD follower uses.
type Registration interface {
	AddAPIServiceToSync(in *apiregistrationv1.APIService)
	RemoveAPIServiceToSync(name string)
}

var _ Registration = (*Controller)(nil)

// CRDs registers the group version of every served version of every CRD for continuous sync, and
// removes it when no CRD serves it any more, as kube's crdRegistrationController does. It registers
// what CRDs declare, established or not, as kube does.
type CRDs struct {
	lister       crdlisters.CustomResourceDefinitionLister
	synced       cache.InformerSynced
	registration Registration
	log          *slog.Logger
	queue        workqueue.TypedRateLimitingInterface[schema.GroupVersion]
	initial      chan struct{}
}

// NewCRDs returns the follower of informer's CRDs.
func NewCRDs(informer crdinformers.CustomResourceDefinitionInformer, registration Registration, log *slog.Logger) (*CRDs, error) {
	c := &CRDs{
		lister:       informer.Lister(),
		registration: registration,
		log:          log.With("component", "crd-autoregister"),
		initial:      make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[schema.GroupVersion](),
			workqueue.TypedRateLimitingQueueConfig[schema.GroupVersion]{Name: "crd_autoregistration_controller"}),
	}
	reg, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue(obj) },
		// Both: a version dropped from the old CRD may have to go.
		UpdateFunc: func(old, obj any) { c.enqueue(old); c.enqueue(obj) },
		DeleteFunc: func(obj any) { c.enqueue(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching customresourcedefinitions: %w", err)
	}
	c.synced = reg.HasSynced
	return c, nil
}

func (c *CRDs) enqueue(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	for _, v := range crd.Spec.Versions {
		c.queue.Add(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
	}
}

// InitialSync is closed once the CRDs present at start are registered: the autoregister
// controller starts after it, so that its first look does not delete their APIServices.
func (c *CRDs) InitialSync() <-chan struct{} { return c.initial }

// Run waits for the informer, registers the CRDs present, then follows changes until ctx ends.
func (c *CRDs) Run(ctx context.Context) {
	defer c.queue.ShutDown()
	if !synced.Wait(ctx, c.synced) {
		return
	}
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		c.log.Error("listing customresourcedefinitions from the informer", "err", err)
		return
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			c.sync(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
		}
	}
	close(c.initial)
	var wg sync.WaitGroup
	wg.Go(func() {
		for c.processNext() {
		}
	})
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *CRDs) processNext() bool {
	gv, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(gv)
	c.sync(gv)
	c.queue.Forget(gv)
	return true
}

// sync registers gv if a CRD serves it, else unregisters it. The lister reads memory: it cannot fail.
func (c *CRDs) sync(gv schema.GroupVersion) {
	crds, _ := c.lister.List(labels.Everything())
	for _, crd := range crds {
		if crd.Spec.Group != gv.Group {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gv.Version && v.Served {
				c.registration.AddAPIServiceToSync(Local(gv, CRDPriority))
				return
			}
		}
	}
	c.registration.RemoveAPIServiceToSync(Name(gv))
}
