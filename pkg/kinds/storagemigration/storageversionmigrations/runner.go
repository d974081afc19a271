// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/storageversionmigrator/migrationrunner.go:
// one migration of a resource runs at a time, the oldest first; a CRD whose objects migrate says so
// in its StorageMigrating condition, and once they all have, its status.storedVersions is trimmed to
// the storage version.

package storageversionmigrations

import (
	"context"
	"fmt"
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	applyv1 "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
)

// runnerManager is the field manager of the CRD conditions, as kube names it.
const runnerManager = "migration-runner-controller"

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// plan is getSVMsForResource: of the migrations of gr, those that ended but still say Running (to
// clean up), the one running, and the oldest that waits to start when none runs.
func plan(all []*svmv1.StorageVersionMigration, gr metav1.GroupResource) (cleanup []*svmv1.StorageVersionMigration, active, promote *svmv1.StorageVersionMigration) {
	for _, svm := range all {
		if svm.Spec.Resource != gr {
			continue
		}
		running, terminal := isTrue(svm, svmv1.MigrationRunning), terminal(svm)
		switch {
		case running && terminal:
			cleanup = append(cleanup, svm.DeepCopy())
		case running:
			active = svm
		case !terminal && (promote == nil || olderThan(svm, promote)):
			promote = svm
		}
	}
	if active != nil {
		return cleanup, active.DeepCopy(), nil
	}
	if promote != nil {
		promote = promote.DeepCopy()
	}
	return cleanup, nil, promote
}

func terminal(svm *svmv1.StorageVersionMigration) bool {
	return isTrue(svm, svmv1.MigrationSucceeded) || isTrue(svm, svmv1.MigrationFailed)
}

// olderThan orders migrations by creation, then name (kube's compareSVM).
func olderThan(a, b *svmv1.StorageVersionMigration) bool {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c < 0
	}
	return strings.Compare(a.Name, b.Name) < 0
}

// setOnce is kube's setStatusConditions: it adds a true condition of type t unless the migration
// already has one of that type, true or false.
func (c *controller) setOnce(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType, reason, message string) {
	if meta.FindStatusCondition(svm.Status.Conditions, string(t)) != nil {
		return
	}
	svm.Status.Conditions = append(svm.Status.Conditions, metav1.Condition{
		Type: string(t), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(c.now()), Reason: reason, Message: message,
	})
}

// markAsActive starts svm: its CRD, if the resource has one, is marked StorageMigrating, and svm
// Running.
func (c *controller) markAsActive(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	err := c.applyCRDStatus(ctx, svm.Spec.Resource, func(crd *apiextensionsv1.CustomResourceDefinition) *applyv1.CustomResourceDefinitionStatusApplyConfiguration {
		return applyv1.CustomResourceDefinitionStatus().WithConditions(applyv1.CustomResourceDefinitionCondition().
			WithType(apiextensionsv1.StorageMigrating).
			WithStatus(apiextensionsv1.ConditionTrue).
			WithLastTransitionTime(metav1.NewTime(c.now())).
			WithReason("MigrationRunning").
			WithMessage(fmt.Sprintf("Migration %s is running", svm.Name)).
			WithObservedGeneration(crd.Generation))
	})
	if err != nil {
		return err
	}
	c.setOnce(svm, svmv1.MigrationRunning, reasonRunning, runningMessage(nil, nil, nil))
	_, err = c.writeStatus(ctx, svm)
	return err
}

// finish is cleanupAdmission: a migration that ended stops saying Running, and its CRD learns the
// outcome; after a success its storedVersions is trimmed to the storage version, unless the CRD
// changed while the objects migrated.
func (c *controller) finish(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	success := isTrue(svm, svmv1.MigrationSucceeded)
	err := c.applyCRDStatus(ctx, svm.Spec.Resource, func(crd *apiextensionsv1.CustomResourceDefinition) *applyv1.CustomResourceDefinitionStatusApplyConfiguration {
		var migrating *apiextensionsv1.CustomResourceDefinitionCondition
		for i := range crd.Status.Conditions {
			if crd.Status.Conditions[i].Type == apiextensionsv1.StorageMigrating {
				migrating = &crd.Status.Conditions[i]
			}
		}
		trim := migrating != nil && migrating.ObservedGeneration == crd.Generation
		reason, msg := "MigrationFailed", "The migration has failed"
		if success {
			reason, msg = "MigrationSucceeded", "The migration has succeeded"
			if trim {
				msg += " and the stored versions have been updated"
			} else {
				msg += " but the stored versions have not been updated due to a generation mismatch"
			}
		}
		status := applyv1.CustomResourceDefinitionStatus().WithConditions(applyv1.CustomResourceDefinitionCondition().
			WithType(apiextensionsv1.StorageMigrating).
			WithStatus(apiextensionsv1.ConditionFalse).
			WithLastTransitionTime(metav1.NewTime(c.now())).
			WithReason(reason).
			WithMessage(msg).
			WithObservedGeneration(crd.Generation))
		// kube trims on a failure too: the condition's generation, not the outcome, says whether
		// the stored versions may be replaced.
		if trim {
			for _, v := range crd.Spec.Versions {
				if v.Storage {
					status.WithStoredVersions(v.Name)
					break
				}
			}
		}
		return status
	})
	if err != nil {
		return err
	}
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(svmv1.MigrationRunning), Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(c.now()),
		Reason: "MigrationCompleted", Message: "Migration completed", ObservedGeneration: svm.Generation,
	})
	_, err = c.writeStatus(ctx, svm)
	return err
}

// applyCRDStatus applies the status status returns to the CRD of gr, if it has one (named
// <resource>.<group>), with the CRD's resourceVersion as a precondition, retrying on conflicts.
// The core group has no CRDs.
func (c *controller) applyCRDStatus(ctx context.Context, gr metav1.GroupResource,
	status func(*apiextensionsv1.CustomResourceDefinition) *applyv1.CustomResourceDefinitionStatusApplyConfiguration) error {
	if gr.Group == "" {
		return nil
	}
	name := gr.Resource + "." + gr.Group
	crds := c.dynamic.Resource(crdResource)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return fmt.Errorf("reading CRD %s: %w", name, err)
		}
		apply := applyv1.CustomResourceDefinition(name).WithResourceVersion(crd.ResourceVersion).WithStatus(status(&crd))
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(apply)
		if err != nil {
			return fmt.Errorf("encoding the status of CRD %s: %w", name, err)
		}
		_, err = crds.ApplyStatus(ctx, name, &unstructured.Unstructured{Object: obj}, metav1.ApplyOptions{FieldManager: runnerManager, Force: true})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing the StorageMigrating condition of CRD %s: %w", name, err)
	}
	return nil
}
