package autoregister

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	apiregistrationinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions/apiregistration/v1"
)

// CompletionCheckName is the name of kube's readiness check that waits for the built-in
// APIServices.
const CompletionCheckName = "autoregister-completion"

// Completion is kube's autoregister-completion readiness check: it fails until every APIService
// of the list has been seen Available once.
type Completion struct {
	mu      sync.Mutex
	pending map[string]bool
	// done closes once nothing is pending: the server's start waits for it, so that "ready" means
	// /readyz passes this check too.
	done chan struct{}
}

// NewCompletion watches informer for the APIServices of want.
func NewCompletion(informer apiregistrationinformers.APIServiceInformer, want []*apiregistrationv1.APIService) (*Completion, error) {
	c := &Completion{pending: map[string]bool{}, done: make(chan struct{})}
	for _, s := range want {
		c.pending[s.Name] = true
	}
	if len(c.pending) == 0 {
		close(c.done)
	}
	seen := func(obj any) {
		s, ok := obj.(*apiregistrationv1.APIService)
		if !ok || !helper.IsAPIServiceConditionTrue(s, apiregistrationv1.Available) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending[s.Name] {
			delete(c.pending, s.Name)
			if len(c.pending) == 0 {
				close(c.done)
			}
		}
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching apiservices: %w", err)
	}
	return c, nil
}

// Done closes once every wanted APIService has been seen Available.
func (c *Completion) Done() <-chan struct{} { return c.done }

// Check returns kube's error while some APIService has not been available yet.
func (c *Completion) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	names := make([]string, 0, len(c.pending))
	for n := range c.pending {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Errorf("missing APIService: %v", names)
}
