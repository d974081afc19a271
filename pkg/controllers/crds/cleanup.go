package crds

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/controllers/crdnames"
	"github.com/apictl/apictl/pkg/serve/handlers"
)

// cleanup is kube's CRD finalizer: it deletes every instance of a deleted CRD (objects with
// finalizers are marked and waited for), then removes the cleanup finalizer, which lets the CRD go.
func (c *Controller) cleanup(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, ext *handlers.Extension) {
	defer c.cleaningDone(crd.Name)
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
		Reason: "NeverEstablished", Message: "resource was never established"}
	if ext != nil {
		c.setCondition(ctx, crd.Name, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating,
			Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress"})
		cond = c.deleteInstances(ctx, ext)
		if cond.Status == apiextensionsv1.ConditionTrue {
			c.setCondition(ctx, crd.Name, cond)
			select { // then the next sync tries again
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			return
		}
	}
	c.setCondition(ctx, crd.Name, cond)
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		cur, err := c.client.CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			c.log.Warn("reading a deleted CRD failed", "crd", crd.Name, "err", err)
			return
		}
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == apiextensionsv1.CustomResourceCleanupFinalizer })
		_, err = c.client.CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			c.log.Info("CRD instances deleted; CRD released", "crd", crd.Name)
			return
		}
		if !apierrors.IsConflict(err) {
			c.log.Warn("removing a CRD's cleanup finalizer failed", "crd", crd.Name, "err", err)
			return
		}
	}
}

// cleaningDone lets the next sync start the cleanup of name again, if it is still needed.
func (c *Controller) cleaningDone(name string) {
	c.cleaningMu.Lock()
	delete(c.cleaning, name)
	c.cleaningMu.Unlock()
	c.wakeUp()
}

// deleteInstances deletes every instance and waits until none is left, with kube's conditions.
func (c *Controller) deleteInstances(ctx context.Context, ext *handlers.Extension) apiextensionsv1.CustomResourceDefinitionCondition {
	wait := 50 * time.Millisecond
	for {
		left, err := ext.DeleteAll(ctx)
		if err != nil {
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
				Reason: "InstanceDeletionFailed", Message: fmt.Sprintf("could not issue all deletes: %v", err)}
		}
		if left == 0 {
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse,
				Reason: "InstanceDeletionCompleted", Message: "removed all instances"}
		}
		select {
		case <-ctx.Done():
			return apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
				Reason: "InstanceDeletionCheck", Message: fmt.Sprintf("could not confirm zero CustomResources remaining: %v", ctx.Err())}
		case <-time.After(wait):
			wait = min(2*wait, 5*time.Second)
		}
	}
}

// setCondition stores one condition of a CRD's status.
func (c *Controller) setCondition(ctx context.Context, name string, cond apiextensionsv1.CustomResourceDefinitionCondition) {
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		cur, err := c.client.CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return
		}
		crdnames.SetCondition(cur, cond)
		_, err = c.client.CustomResourceDefinitions().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return
		}
	}
}
