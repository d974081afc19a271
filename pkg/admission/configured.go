package admission

import (
	"sync/atomic"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// informerConfigured is the Configured source when the caller gives none: the number of objects
// in the informers of f, the factory the plugins read too.
func informerConfigured(f informers.SharedInformerFactory) func(resource string) func() bool {
	return func(resource string) func() bool {
		v1 := f.Admissionregistration().V1()
		var inf cache.SharedIndexInformer
		switch resource {
		case "mutatingwebhookconfigurations":
			inf = v1.MutatingWebhookConfigurations().Informer()
		case "validatingwebhookconfigurations":
			inf = v1.ValidatingWebhookConfigurations().Informer()
		case "mutatingadmissionpolicybindings":
			inf = v1.MutatingAdmissionPolicyBindings().Informer()
		case "validatingadmissionpolicybindings":
			inf = v1.ValidatingAdmissionPolicyBindings().Informer()
		case "resourcequotas":
			inf = f.Core().V1().ResourceQuotas().Informer()
		default:
			// Not one of the configurations a plugin acts on: call the plugin, it knows.
			return func() bool { return true }
		}
		return CountConfigured(inf)
	}
}

// counted is the number of objects an informer holds, kept current by its events.
type counted struct {
	synced func() bool
	// listed caches synced once it is true (an informer never unsyncs): HasSynced takes locks.
	listed atomic.Bool
	n      atomic.Int64
}

// newCounted counts inf's objects. The count is recomputed from the store on every event rather
// than incremented, so a relist that replaces the store cannot make it drift.
func newCounted(inf cache.SharedIndexInformer) *counted {
	c := &counted{synced: inf.HasSynced}
	recount := func() { c.n.Store(int64(len(inf.GetStore().ListKeys()))) }
	// The registration handle is not needed: the handler lives as long as the informer.
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { recount() },
		UpdateFunc: func(any, any) {},
		DeleteFunc: func(any) { recount() },
	})
	return c
}

// configured reports whether some object exists, or the informer has not listed yet: until then
// the plugin must run, and it waits for its configurations as kube's plugins do.
func (c *counted) configured() bool {
	if c.n.Load() > 0 {
		return true
	}
	if c.listed.Load() {
		return false
	}
	if c.synced() {
		c.listed.Store(true)
		return false
	}
	return true
}

// CountConfigured returns a Configured test for a Plugin that acts only when inf holds some object
// (a policy plugin with its bindings' informer, for instance).
func CountConfigured(inf cache.SharedIndexInformer) func() bool {
	return newCounted(inf).configured
}
