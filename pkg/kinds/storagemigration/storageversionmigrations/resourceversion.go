// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/storageversionmigrator/resourceversion.go:
// before a running migration rewrites anything, it records the resource's current resourceVersion;
// objects written after it are already in the storage version and are left alone.

package storageversionmigrations

import (
	"context"
	"fmt"
	"slices"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// verbsRequiredForMigration are what the migrator does to a resource.
var verbsRequiredForMigration = []string{"update", "patch", "list"}

// recordResourceVersion sets status.resourceVersion of the running migration svm, or fails it when
// its resource is not served, or served without the verbs a migration needs.
func (c *controller) recordResourceVersion(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	gvr, ok, err := c.resolve(svm)
	if err != nil {
		return err
	}
	if !ok {
		return c.failOnce(ctx, svm, "resource does not exist in discovery")
	}
	migratable, err := c.isMigratable(gvr)
	if err != nil {
		return err
	}
	if !migratable {
		return c.failOnce(ctx, svm, fmt.Sprintf("resource %q does not support discovery operations: %v", gvr.String(), verbsRequiredForMigration))
	}
	// A list of one object costs little and carries the revision the resource was read at.
	list, err := c.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("error getting latest resourceVersion for %s: %w", gvr.String(), err)
	}
	latest := list.GetResourceVersion()
	if _, err := resourceversion.CompareResourceVersion(latest, latest); err != nil {
		return c.failOnce(ctx, svm, fmt.Errorf("latest resourceVersion for %s is not valid: %w", gvr.String(), err).Error())
	}
	svm.Status.ResourceVersion = latest
	_, err = c.writeStatus(ctx, svm)
	return err
}

// failOnce fails svm with message, unless it has a Failed condition already (kube's
// setStatusConditions).
func (c *controller) failOnce(ctx context.Context, svm *svmv1.StorageVersionMigration, message string) error {
	c.setOnce(svm, svmv1.MigrationFailed, reasonFailed, message)
	_, err := c.writeStatus(ctx, svm)
	return err
}

// resolve finds the resource svm migrates. While it is not served and svm is young, it asks for
// another look (a requeue error) with discovery read again; false once svm has waited enough.
func (c *controller) resolve(svm *svmv1.StorageVersionMigration) (schema.GroupVersionResource, bool, error) {
	gvr, ok, err := c.resourceFor(svm.Spec.Resource)
	if err != nil || ok {
		return gvr, ok, err
	}
	if wait := c.untilGraceEnds(svm); wait > 0 {
		c.resetMapperIfStale()
		return gvr, false, requeue{after: min(wait, mapperResetEvery)}
	}
	return gvr, false, nil
}

// resourceFor is the version of gr that discovery prefers; false when gr is not served.
func (c *controller) resourceFor(gr metav1.GroupResource) (schema.GroupVersionResource, bool, error) {
	gvrs, err := c.mapper.ResourcesFor(schema.GroupVersionResource{Group: gr.Group, Resource: gr.Resource})
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, nil
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("finding the resource %s: %w", gr.String(), err)
	}
	for _, gvr := range gvrs {
		if gvr.Group == gr.Group && gvr.Resource == gr.Resource {
			return gvr, true, nil
		}
	}
	return schema.GroupVersionResource{}, false, nil
}

// isMigratable says whether discovery lists the verbs a migration needs for gvr.
func (c *controller) isMigratable(gvr schema.GroupVersionResource) (bool, error) {
	list, err := c.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				return !slices.ContainsFunc(verbsRequiredForMigration, func(v string) bool { return !slices.Contains(r.Verbs, v) }), nil
			}
		}
	}
	if err != nil {
		return false, fmt.Errorf("reading the discovery of %s: %w", gvr.GroupVersion(), err)
	}
	return false, fmt.Errorf("resource %q not found in discovery", gvr.String())
}
