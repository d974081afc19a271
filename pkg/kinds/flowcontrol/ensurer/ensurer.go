// Package ensurer keeps the API Priority and Fairness bootstrap configuration in the cluster, as
// kube-apiserver's priority-and-fairness-config-producer post-start hook does: the mandatory
// FlowSchemas and PriorityLevelConfigurations are (re)created and their spec restored; the suggested
// ones are created and kept up to date until an operator edits them; bootstrap objects that the
// server no longer has are removed. Every replica runs it: replicas of one version agree on every
// object, a create that loses a race reads the winner's, and an update that loses one is left to the
// next round.
package ensurer

// Ported from k8s.io/kubernetes v1.37.2 pkg/registry/flowcontrol/ensurer/strategy.go (EnsureStrategy,
// ReviseIfNeeded, EnsureConfiguration, RemoveUnwantedObjects), flowschema.go and
// prioritylevelconfiguration.go (the spec comparisons), and pkg/registry/flowcontrol/rest/
// storage_flowcontrol.go (ensureAPFBootstrapConfiguration and ensure). The objects come from
// k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"

	"github.com/apictl/apictl/pkg/kinds/flowcontrol/flowschemas"
	"github.com/apictl/apictl/pkg/kinds/flowcontrol/prioritylevelconfigurations"
)

// FieldManager is kube's manager name for the ensurer's writes.
const FieldManager = "api-priority-and-fairness-config-producer-v1"

// HookName is kube's name of the post-start hook that runs the ensurer.
const HookName = "priority-and-fairness-config-producer"

// Ensurer keeps the bootstrap configuration through Client, reading what exists from the listers
// (informers' caches that the caller starts).
type Ensurer struct {
	Client         flowcontrolclient.FlowcontrolV1Interface
	FlowSchemas    flowcontrollisters.FlowSchemaLister
	PriorityLevels flowcontrollisters.PriorityLevelConfigurationLister
	Logger         *slog.Logger
}

// Initialize ensures the configuration once, retrying each second for at most five minutes, as the
// hook does before the server reports ready.
func (e *Ensurer) Initialize(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		err := e.Ensure(ctx)
		if err == nil {
			return nil
		}
		e.Logger.Warn("ensuring the API Priority and Fairness bootstrap configuration, will retry", "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("ensuring the API Priority and Fairness bootstrap configuration: %w", errors.Join(err, ctx.Err()))
		case <-tick.C:
		}
	}
}

// Keep ensures the configuration every minute until ctx ends, so that what an operator deleted or
// changed of the mandatory objects comes back.
func (e *Ensurer) Keep(ctx context.Context) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := e.Ensure(ctx); err != nil && ctx.Err() == nil {
			e.Logger.Warn("ensuring the API Priority and Fairness bootstrap configuration, will retry", "err", err)
		}
	}
}

// Ensure makes one pass: the suggested objects, then the mandatory ones, then the removal of
// bootstrap objects the server no longer has.
func (e *Ensurer) Ensure(ctx context.Context) error {
	pls := e.plOps()
	fss := e.fsOps()
	if err := ensureAll(ctx, pls, bootstrap.SuggestedPriorityLevelConfigurations, false); err != nil {
		return fmt.Errorf("failed ensuring suggested settings - %w", err)
	}
	if err := ensureAll(ctx, fss, bootstrap.SuggestedFlowSchemas, false); err != nil {
		return fmt.Errorf("failed ensuring suggested settings - %w", err)
	}
	if err := ensureAll(ctx, pls, bootstrap.MandatoryPriorityLevelConfigurations, true); err != nil {
		return fmt.Errorf("failed ensuring mandatory settings - %w", err)
	}
	if err := ensureAll(ctx, fss, bootstrap.MandatoryFlowSchemas, true); err != nil {
		return fmt.Errorf("failed ensuring mandatory settings - %w", err)
	}
	if err := removeUnwanted(ctx, fss, append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...)); err != nil {
		return fmt.Errorf("failed to delete removed settings - %w", err)
	}
	if err := removeUnwanted(ctx, pls, append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...)); err != nil {
		return fmt.Errorf("failed to delete removed settings - %w", err)
	}
	return nil
}

// object is a FlowSchema or a PriorityLevelConfiguration pointer.
type object interface {
	comparable
	metav1.Object
	runtime.Object
}

// ops are what the ensurer does with one kind.
type ops[T object] struct {
	create func(context.Context, T, metav1.CreateOptions) (T, error)
	update func(context.Context, T, metav1.UpdateOptions) (T, error)
	delete func(context.Context, string, metav1.DeleteOptions) error
	get    func(string) (T, error)
	list   func(labels.Selector) ([]T, error)
	// replaceSpec is a copy of into with from's spec; specEqualish says whether actual's spec is
	// expected's once defaulted.
	replaceSpec  func(into, from T) T
	specEqualish func(expected, actual T) bool
	deepCopy     func(T) T
	log          *slog.Logger
}

func (e *Ensurer) fsOps() ops[*flowcontrolv1.FlowSchema] {
	c := e.Client.FlowSchemas()
	return ops[*flowcontrolv1.FlowSchema]{
		create: c.Create, update: c.Update, delete: c.Delete, get: e.FlowSchemas.Get, list: e.FlowSchemas.List,
		replaceSpec: func(into, from *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
			out := into.DeepCopy()
			out.Spec = *from.Spec.DeepCopy()
			return out
		},
		specEqualish: func(expected, actual *flowcontrolv1.FlowSchema) bool {
			want := expected.DeepCopy()
			flowschemas.SetDefaults(want)
			return apiequality.Semantic.DeepEqual(want.Spec, actual.Spec)
		},
		deepCopy: (*flowcontrolv1.FlowSchema).DeepCopy,
		log:      e.Logger,
	}
}

func (e *Ensurer) plOps() ops[*flowcontrolv1.PriorityLevelConfiguration] {
	c := e.Client.PriorityLevelConfigurations()
	return ops[*flowcontrolv1.PriorityLevelConfiguration]{
		create: c.Create, update: c.Update, delete: c.Delete, get: e.PriorityLevels.Get, list: e.PriorityLevels.List,
		replaceSpec: func(into, from *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
			out := into.DeepCopy()
			out.Spec = *from.Spec.DeepCopy()
			return out
		},
		specEqualish: func(expected, actual *flowcontrolv1.PriorityLevelConfiguration) bool {
			want := expected.DeepCopy()
			prioritylevelconfigurations.SetDefaults(want)
			// The exempt level's shares and lendable percent are the operator's to tune.
			if expected.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
				if actual.Spec.Exempt == nil {
					return false
				}
				want.Spec.Exempt.NominalConcurrencyShares = actual.Spec.Exempt.NominalConcurrencyShares
				want.Spec.Exempt.LendablePercent = actual.Spec.Exempt.LendablePercent
			}
			return apiequality.Semantic.DeepEqual(want.Spec, actual.Spec)
		},
		deepCopy: (*flowcontrolv1.PriorityLevelConfiguration).DeepCopy,
		log:      e.Logger,
	}
}

func ensureAll[T object](ctx context.Context, o ops[T], boots []T, mandatory bool) error {
	for _, b := range boots {
		if err := ensureOne(ctx, o, b, mandatory); err != nil {
			return err
		}
	}
	return nil
}

// ensureOne is EnsureConfiguration: a missing object is created; an existing one is revised when
// its strategy says so. A conflict means another writer (a replica) was first: the next round looks
// again.
func ensureOne[T object](ctx context.Context, o ops[T], boot T, mandatory bool) error {
	name := boot.GetName()
	kind := strategyName(mandatory)
	var current T
	for {
		var err error
		if current, err = o.get(name); err == nil {
			break
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to retrieve %T type=%s name=%q error=%w", boot, kind, name, err)
		}
		if _, err = o.create(ctx, o.deepCopy(boot), metav1.CreateOptions{FieldManager: FieldManager}); err == nil {
			o.log.Debug("created an API Priority and Fairness bootstrap object", "type", kind, "name", name)
			return nil
		} else if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create %T type=%s name=%q error=%w", boot, kind, name, err)
		}
		// Created concurrently: the cache shows it soon.
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	revised, ok := revise(o, current, boot, mandatory)
	if !ok {
		return nil
	}
	_, err := o.update(ctx, revised, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		o.log.Info("updated an API Priority and Fairness bootstrap object", "type", kind, "name", name)
		return nil
	case apierrors.IsConflict(err):
		return nil
	}
	return fmt.Errorf("failed to update the %T, will retry later type=%s name=%q error=%w", boot, kind, name, err)
}

func strategyName(mandatory bool) string {
	if mandatory {
		return "mandatory"
	}
	return "suggested"
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// revise is ReviseIfNeeded: a mandatory object always gets the bootstrap spec back; a suggested one
// only while its auto-update annotation says true, or, without a readable annotation, while nobody
// changed its spec (generation 1). The annotation is set to what was decided.
func revise[T object](o ops[T], current, boot T, mandatory bool) (T, bool) {
	var zero T
	autoUpdate := mandatory || shouldUpdateSpec(current)
	updateAnnotation := annotationDiffers(current, autoUpdate)
	specChanged := autoUpdate && !o.specEqualish(boot, current)
	if !updateAnnotation && !specChanged {
		return zero, false
	}
	revised := o.deepCopy(current)
	if specChanged {
		revised = o.replaceSpec(current, boot)
	}
	if updateAnnotation {
		a := revised.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		revised.SetAnnotations(a)
	}
	return revised, true
}

func shouldUpdateSpec(obj metav1.Object) bool {
	if auto, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return auto
	}
	return obj.GetGeneration() == 1
}

func annotationDiffers(obj metav1.Object, want bool) bool {
	v, ok := obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
	if !ok {
		return true
	}
	have, err := strconv.ParseBool(v)
	return err != nil || have != want
}

// removeUnwanted is RemoveUnwantedObjects: an object that is not a bootstrap one but says it is
// auto-updated (the server made it in an older version) goes.
func removeUnwanted[T object](ctx context.Context, o ops[T], boots []T) error {
	current, err := o.list(labels.Everything())
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	for _, b := range boots {
		wanted[b.GetName()] = true
	}
	for _, obj := range current {
		name := obj.GetName()
		if wanted[name] {
			continue
		}
		if auto, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err != nil || !auto {
			continue // the operator's, or not auto-updated
		}
		if err := o.delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete unwanted APF object %q - %w", name, err)
		}
		o.log.Info("deleted an unwanted API Priority and Fairness object", "name", name)
	}
	return nil
}
