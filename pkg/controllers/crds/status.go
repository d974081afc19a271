package crds

import (
	"context"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/controllers/crdnames"
)

// statusWriters bounds the status writes in flight: etcd commits concurrent writes in shared
// fsyncs, so a burst of new CRDs is Established in a few commits rather than one after another.
const statusWriters = 16

// storeStatuses hands the statuses sync decided to the writers, so that the next batch of CRDs is
// served while these are stored. A status already being written from the same resourceVersion is
// not written twice.
func (c *Controller) storeStatuses(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) {
	for _, crd := range crds {
		key := crd.Name + "@" + crd.ResourceVersion
		c.writingMu.Lock()
		dup := c.writing[key]
		c.writing[key] = true
		c.writingMu.Unlock()
		if dup {
			continue
		}
		select {
		case c.statuses <- crd:
		case <-ctx.Done():
			// The term ended: the next one decides this status again and must not find it taken.
			c.writingMu.Lock()
			delete(c.writing, key)
			c.writingMu.Unlock()
			return
		}
	}
}

// writeStatuses stores statuses until ctx ends.
func (c *Controller) writeStatuses(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case crd := <-c.statuses:
			_, err := c.client.CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{})
			if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				// A conflict or a delete comes back through the watch, and so does the next try.
				c.log.Warn("storing a CRD's status failed", "crd", crd.Name, "err", err)
			}
			c.writingMu.Lock()
			delete(c.writing, crd.Name+"@"+crd.ResourceVersion)
			c.writingMu.Unlock()
		}
	}
}

// needsNaming reports whether kube's naming controller would look at crd: its names are not all
// accepted yet, or its conditions were never set.
func needsNaming(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return !crdnames.NamesEqual(crd.Spec.Names, crd.Status.AcceptedNames) ||
		apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted) == nil ||
		apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established) == nil
}
