// Ported from k8s.io/kubernetes v1.37.2 pkg/controller/storageversionmigrator/storageversionmigrator.go
// and util.go: the migration itself. kube reads the objects from the garbage collector's informer
// of the resource, once it has caught up with the recorded resourceVersion; this reads them in
// pages of a LIST (limit and continue), which is never behind and never holds them all.

package storageversionmigrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// rewritePatch is kube's patch of one object: its apiVersion, kind and resourceVersion, a JSON merge
// patch that changes nothing but fails with a Conflict if the object moved since it was listed. The
// store then writes the object again only if its stored bytes differ from what it encodes now: a
// new storage version (or encryption key) rewrites it, an object already current stays as it is.
type rewritePatch struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
}

// progress counts a migration's objects as kube's messages do.
type progress struct {
	// total is every object listed so far, plus the count the last page said remains.
	total int
	// pending are the objects of total not yet rewritten (nor found moved or gone).
	pending int
}

// migrate rewrites every object of the running migration svm's resource that is not newer than
// status.resourceVersion, then marks svm Succeeded; it fails svm on an error a retry would not
// cure and returns the others, after saying so in the Running condition, for another try.
func (c *controller) migrate(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	gvr, ok, err := c.resolve(svm)
	if err != nil {
		return err
	}
	if !ok {
		return c.fail(ctx, svm, errors.New("unable to obtain GVR from discovery"))
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return c.fail(ctx, svm, err)
	}
	upTo := svm.Status.ResourceVersion
	var p progress
	lastReport := c.now()
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		page, err := c.dynamic.Resource(gvr).List(ctx, opts)
		var status apierrors.APIStatus
		if apierrors.IsResourceExpired(err) && errors.As(err, &status) && status.Status().Continue != "" {
			// The snapshot was compacted away: go on from the latest, where objects written since
			// are newer than upTo and left alone.
			opts.Continue = status.Status().Continue
			continue
		}
		if err != nil {
			return c.stopOn(ctx, svm, err, p)
		}
		remaining := 0
		if n := page.GetRemainingItemCount(); n != nil {
			remaining = int(*n)
		}
		p.total += len(page.Items)
		p.pending += len(page.Items)
		for i := range page.Items {
			if err := c.rewrite(ctx, gvr, gvk, &page.Items[i], upTo); err != nil {
				return c.stopOn(ctx, svm, err, p)
			}
			p.pending--
		}
		opts.Continue = page.GetContinue()
		if opts.Continue == "" {
			break
		}
		if c.now().Sub(lastReport) >= progressEvery {
			lastReport = c.now()
			shown := progress{total: p.total + remaining, pending: p.pending + remaining}
			if updated, ok := c.reportRunning(ctx, svm, shown, nil); ok {
				svm = updated
			}
		}
	}
	setRunning(svm, c.now(), runningMessage(&p.pending, &p.total, nil))
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(svmv1.MigrationSucceeded), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(c.now()),
		Reason: reasonSucceeded, Message: "Migration completed",
	})
	_, err = c.writeStatus(ctx, svm)
	return err
}

// rewrite patches obj as it is, unless it is newer than upTo. A Conflict (it moved, so it was
// written in the storage version) and a NotFound (it is gone) leave nothing to migrate.
func (c *controller) rewrite(ctx context.Context, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, obj *unstructured.Unstructured, upTo string) error {
	cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), upTo)
	if err != nil {
		return permanent{fmt.Errorf("comparing the resourceVersion of %s %s: %w", gvr.Resource, name(obj), err)}
	}
	if cmp > 0 {
		return nil
	}
	var p rewritePatch
	p.APIVersion, p.Kind = gvk.ToAPIVersionAndKind()
	p.Metadata.ResourceVersion = obj.GetResourceVersion()
	data, err := json.Marshal(p)
	if err != nil {
		return permanent{err}
	}
	_, err = c.dynamic.Resource(gvr).Namespace(obj.GetNamespace()).
		Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// permanent marks an error that fails a migration whatever its kind.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

func name(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// stopOn ends a migration run on err: a transient error is reported in the Running condition and
// returned for another try; any other fails the migration with the count of objects left. The
// messages carry err as the server said it, as kube's do.
func (c *controller) stopOn(ctx context.Context, svm *svmv1.StorageVersionMigration, err error, p progress) error {
	if !errors.As(err, new(permanent)) && isRetriable(err) {
		c.reportRunning(ctx, svm, p, err)
		return fmt.Errorf("migrating storage version migration %s: %w", svm.Name, err)
	}
	setRunning(svm, c.now(), runningMessage(&p.pending, &p.total, nil))
	meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(svmv1.MigrationFailed), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(c.now()),
		Reason:  reasonFailed,
		Message: fmt.Sprintf("%d/%d not yet migrated. migration encountered unhandled error: %s", p.pending, p.total, err),
	})
	_, werr := c.writeStatus(ctx, svm)
	return werr
}

// fail is kube's failMigration, for a migration that could not start rewriting.
func (c *controller) fail(ctx context.Context, svm *svmv1.StorageVersionMigration, err error) error {
	if !meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(svmv1.MigrationFailed), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(c.now()),
		Reason: reasonFailed, Message: fmt.Sprintf("migration encountered unhandled error: %s", err),
	}) {
		return nil
	}
	_, werr := c.writeStatus(ctx, svm)
	return werr
}

// reportRunning writes the progress p (and a transient error) to the Running condition. It is
// advice: a failed write is logged, and the stored migration returned only when it succeeded.
func (c *controller) reportRunning(ctx context.Context, svm *svmv1.StorageVersionMigration, p progress, transient error) (*svmv1.StorageVersionMigration, bool) {
	if !setRunning(svm, c.now(), runningMessage(&p.pending, &p.total, transient)) {
		return svm, false
	}
	out, err := c.writeStatus(ctx, svm)
	if err != nil {
		c.log.Debug("reporting a migration's progress", "name", svm.Name, "err", err)
		return svm, false
	}
	return out, true
}

// setRunning sets the Running condition's message, saying whether it changed.
func setRunning(svm *svmv1.StorageVersionMigration, now time.Time, message string) bool {
	return meta.SetStatusCondition(&svm.Status.Conditions, metav1.Condition{
		Type: string(svmv1.MigrationRunning), Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now),
		Reason: reasonRunning, Message: message,
	})
}

// runningMessage is kube's migrationRunningMessage.
func runningMessage(pending, total *int, transient error) string {
	msg := "The migration is running"
	if pending != nil && total != nil && *total > 0 {
		if *pending > 0 {
			msg += fmt.Sprintf(", %d/%d objects not yet migrated", *pending, *total)
		} else {
			msg += fmt.Sprintf(", %d objects verified migrated", *total)
		}
	}
	if transient != nil {
		msg += fmt.Sprintf("; transient error: %s", transient)
	}
	return msg
}

// isRetriable is kube's isRetriableError: the server is busy, restarting or unreachable.
func isRetriable(err error) bool {
	return utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err)
}
