package clients

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apictl/apictl/internal/servertest"
)

// The Widget kind is declared by testdata/controllerruntime/widgets.yaml. The test's operator turns
// each Widget into a ConfigMap it controls and cleans that ConfigMap up through a finalizer: the
// server has no garbage collector, so ownerReferences alone would leave it behind.
const (
	crWidgetGroup   = "ops.example.com"
	crWidgetVersion = "v1"
	crFinalizer     = "ops.example.com/configmap-cleanup"
	crOwnerLabel    = "ops.example.com/widget"
	crLeaseID       = "widget-operator.ops.example.com"
	crNamespace     = "widgets"
	crReadyType     = "Ready"
)

// crWidget is a hand-written Go type for the Widget custom resource.
type crWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   crWidgetSpec   `json:"spec,omitempty"`
	Status crWidgetStatus `json:"status,omitempty"`
}

type crWidgetSpec struct {
	Size int32             `json:"size,omitempty"`
	Data map[string]string `json:"data,omitempty"`
}

type crWidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	ConfigMapName      string             `json:"configMapName,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type crWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []crWidget `json:"items"`
}

var (
	_ client.Object     = (*crWidget)(nil)
	_ client.ObjectList = (*crWidgetList)(nil)
)

func (w *crWidget) deepCopy() *crWidget {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Data = maps.Clone(w.Spec.Data)
	// metav1.Condition holds only values, so copying the slice copies the conditions.
	out.Status.Conditions = slices.Clone(w.Status.Conditions)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (w *crWidget) DeepCopyObject() runtime.Object { return w.deepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *crWidgetList) DeepCopyObject() runtime.Object {
	out := &crWidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]crWidget, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].deepCopy()
		}
	}
	return out
}

// crNewScheme knows the built-in kinds and Widget.
func crNewScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: crWidgetGroup, Version: crWidgetVersion}
	s.AddKnownTypeWithName(gv.WithKind("Widget"), &crWidget{})
	s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &crWidgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// crConfigMapName names the ConfigMap a Widget controls.
func crConfigMapName(widget string) string { return widget + "-config" }

// crConfigMapData is what a Widget's ConfigMap holds: spec.data plus spec.size under "size".
func crConfigMapData(spec crWidgetSpec) map[string]string {
	data := maps.Clone(spec.Data)
	if data == nil {
		data = map[string]string{}
	}
	data["size"] = strconv.Itoa(int(spec.Size))
	return data
}

// crWidgetReconciler is the operator: it reads through the manager's cache, writes through its client.
type crWidgetReconciler struct {
	client.Client
	// apiReader reads from the server, bypassing the cache: the finalizer must not miss a ConfigMap
	// the cache has not seen yet.
	apiReader client.Reader
	scheme    *runtime.Scheme
	// cleanups counts finalizer runs that removed the finalizer.
	cleanups atomic.Int32
}

func (r *crWidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w crWidget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &w)
	}
	if controllerutil.AddFinalizer(&w, crFinalizer) {
		// The update's watch event brings the Widget back, finalizer and all.
		return ctrl.Result{}, r.Update(ctx, &w)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: crConfigMapName(w.Name)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[crOwnerLabel] = w.Name
		cm.Data = crConfigMapData(w.Spec)
		return controllerutil.SetControllerReference(&w, cm, r.scheme)
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing configmap %s: %w", cm.Name, err)
	}

	changed := meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type:               crReadyType,
		Status:             metav1.ConditionTrue,
		ObservedGeneration: w.Generation,
		Reason:             "ConfigMapWritten",
		Message:            "configmap " + cm.Name + " holds the spec",
	})
	if !changed && w.Status.ObservedGeneration == w.Generation && w.Status.ConfigMapName == cm.Name {
		return ctrl.Result{}, nil
	}
	w.Status.ObservedGeneration = w.Generation
	w.Status.ConfigMapName = cm.Name
	return ctrl.Result{}, r.Status().Update(ctx, &w)
}

// finalize deletes the ConfigMaps the Widget controls, then releases the Widget.
func (r *crWidgetReconciler) finalize(ctx context.Context, w *crWidget) error {
	if !controllerutil.ContainsFinalizer(w, crFinalizer) {
		return nil
	}
	var cms corev1.ConfigMapList
	if err := r.apiReader.List(ctx, &cms, client.InNamespace(w.Namespace), client.MatchingLabels{crOwnerLabel: w.Name}); err != nil {
		return fmt.Errorf("listing configmaps of widget %s: %w", w.Name, err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if !metav1.IsControlledBy(cm, w) {
			continue
		}
		if err := r.Delete(ctx, cm, client.Preconditions{UID: ptr.To(cm.UID)}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting configmap %s: %w", cm.Name, err)
		}
	}
	controllerutil.RemoveFinalizer(w, crFinalizer)
	if err := r.Update(ctx, w); err != nil {
		// A stale cache can hand us a Widget whose finalizer an earlier reconcile already removed;
		// the server has deleted it since.
		return client.IgnoreNotFound(err)
	}
	r.cleanups.Add(1)
	return nil
}

// crEventually polls check until it returns nil, failing the test with check's last error after 30s.
func crEventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestControllerRuntime runs a controller-runtime manager with leader election and an operator that
// owns ConfigMaps, and drives it through a Widget's life: create, update, a lost ConfigMap, delete.
func TestControllerRuntime(t *testing.T) {
	srv := servertest.Start(t, "--api-config", "testdata/controllerruntime/widgets.yaml")
	ctx := t.Context()
	scheme := crNewScheme(t)

	// api is the test's own client, uncached: it acts and observes as a user would.
	api, err := client.New(rest.CopyConfig(srv.AdminConfig), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: crNamespace}}); err != nil {
		t.Fatal(err)
	}

	logs := &servertest.Buffer{}
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(logs, prefix, args) }, funcr.Options{})
	mgr, err := ctrl.NewManager(rest.CopyConfig(srv.AdminConfig), ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              crLeaseID,
		LeaderElectionNamespace:       crNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(4 * time.Second),
		RenewDeadline:                 ptr.To(3 * time.Second),
		RetryPeriod:                   ptr.To(500 * time.Millisecond),
		// The controller's name is process-wide; -count=2 would register it twice.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &crWidgetReconciler{Client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), scheme: mgr.GetScheme()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&crWidget{}).Owns(&corev1.ConfigMap{}).Complete(rec); err != nil {
		t.Fatal(err)
	}

	mgrCtx, stopManager := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		stopManager()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("the manager did not stop within 60s")
		}
	}
	defer func() {
		stop()
		if t.Failed() {
			t.Logf("controller-runtime logs:\n%s", logs)
			t.Logf("server logs:\n%s", srv.Logs)
		} else if errs := crUnexpectedReconcileErrors(logs.String()); len(errs) > 0 {
			// The operator retried them and got there, but the server should not have failed them.
			t.Logf("reconciles that failed for a reason other than a conflict:\n%s", strings.Join(errs, "\n"))
		}
	}()

	t.Log("the manager takes the lease")
	var lease coordinationv1.Lease
	crEventually(t, "lease "+crNamespace+"/"+crLeaseID+" has a holder", func() error {
		if err := api.Get(ctx, client.ObjectKey{Namespace: crNamespace, Name: crLeaseID}, &lease); err != nil {
			return err
		}
		if ptr.Deref(lease.Spec.HolderIdentity, "") == "" {
			return fmt.Errorf("holderIdentity is empty: %+v", lease.Spec)
		}
		return nil
	})
	if got := ptr.Deref(lease.Spec.LeaseDurationSeconds, 0); got != 4 {
		t.Errorf("lease duration: got %ds, want 4s", got)
	}

	t.Log("a new Widget gets its ConfigMap, a finalizer and a Ready status")
	widget := &crWidget{
		ObjectMeta: metav1.ObjectMeta{Namespace: crNamespace, Name: "alpha"},
		Spec:       crWidgetSpec{Size: 3, Data: map[string]string{"color": "blue"}},
	}
	if err := api.Create(ctx, widget); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(widget)
	cmKey := client.ObjectKey{Namespace: crNamespace, Name: crConfigMapName(widget.Name)}
	wantData := map[string]string{"color": "blue", "size": "3"}
	crWaitConfigMap(t, api, widget, wantData)
	crWaitReady(t, api, key, 1)

	t.Log("a spec change reaches the ConfigMap and observedGeneration")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var w crWidget
		if err := api.Get(ctx, key, &w); err != nil {
			return err
		}
		w.Spec.Size = 5
		w.Spec.Data = map[string]string{"color": "green", "shape": "round"}
		return api.Update(ctx, &w)
	}); err != nil {
		t.Fatal(err)
	}
	wantData = map[string]string{"color": "green", "shape": "round", "size": "5"}
	cm := crWaitConfigMap(t, api, widget, wantData)
	crWaitReady(t, api, key, 2)

	t.Log("a ConfigMap deleted by hand comes back")
	if err := api.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	recreated := crWaitConfigMap(t, api, widget, wantData, cm.UID)
	if recreated.UID == cm.UID {
		t.Errorf("the ConfigMap kept its UID %s: it was not recreated", cm.UID)
	}

	t.Log("deleting the Widget runs its finalizer, which deletes the ConfigMap")
	if err := api.Delete(ctx, &crWidget{ObjectMeta: metav1.ObjectMeta{Namespace: crNamespace, Name: widget.Name}}); err != nil {
		t.Fatal(err)
	}
	crEventually(t, "the Widget is gone", func() error {
		return crGone(ctx, api, key, &crWidget{})
	})
	if err := crGone(ctx, api, cmKey, &corev1.ConfigMap{}); err != nil {
		t.Errorf("after the finalizer ran: %v", err)
	}
	if n := rec.cleanups.Load(); n != 1 {
		t.Errorf("the finalizer ran %d times, want 1", n)
	}

	t.Log("stopping the manager releases the lease")
	stop()
	if err := api.Get(ctx, client.ObjectKey{Namespace: crNamespace, Name: crLeaseID}, &lease); err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("after the manager stopped, the lease is still held by %q", h)
	}
}

// crUnexpectedReconcileErrors returns the "Reconciler error" lines of a controller-runtime log other
// than optimistic-concurrency conflicts, which a controller reading from a cache meets routinely.
func crUnexpectedReconcileErrors(log string) []string {
	var errs []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, `"Reconciler error"`) && !strings.Contains(line, "the object has been modified") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	return errs
}

// crGone returns nil if the object at key does not exist.
func crGone(ctx context.Context, api client.Client, key client.ObjectKey, obj client.Object) error {
	err := api.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("%s still exists (deletionTimestamp %v, finalizers %v)", key, obj.GetDeletionTimestamp(), obj.GetFinalizers())
	}
}

// crWaitConfigMap waits until owner's ConfigMap holds want, is controlled by owner, and has none of
// the UIDs in not (the ones it had before being deleted).
func crWaitConfigMap(t *testing.T, api client.Client, owner *crWidget, want map[string]string, not ...types.UID) *corev1.ConfigMap {
	t.Helper()
	key := client.ObjectKey{Namespace: owner.Namespace, Name: crConfigMapName(owner.Name)}
	cm := &corev1.ConfigMap{}
	crEventually(t, "configmap "+key.String()+" follows its Widget", func() error {
		if err := api.Get(t.Context(), key, cm); err != nil {
			return err
		}
		if slices.Contains(not, cm.UID) {
			return fmt.Errorf("configmap still has the old UID %s", cm.UID)
		}
		if !maps.Equal(cm.Data, want) {
			return fmt.Errorf("data: got %v, want %v", cm.Data, want)
		}
		ref := metav1.GetControllerOf(cm)
		if ref == nil {
			return fmt.Errorf("no controller ownerReference in %+v", cm.OwnerReferences)
		}
		if ref.APIVersion != crWidgetGroup+"/"+crWidgetVersion || ref.Kind != "Widget" || ref.Name != owner.Name ||
			ref.UID != owner.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			return fmt.Errorf("controller ownerReference %+v does not name Widget %s (%s)", *ref, owner.Name, owner.UID)
		}
		return nil
	})
	return cm
}

// crWaitReady waits until the Widget at key has reached generation and reports it observed and Ready.
func crWaitReady(t *testing.T, api client.Client, key client.ObjectKey, generation int64) {
	t.Helper()
	crEventually(t, fmt.Sprintf("widget %s is ready at generation %d", key, generation), func() error {
		var w crWidget
		if err := api.Get(t.Context(), key, &w); err != nil {
			return err
		}
		if w.Generation != generation {
			return fmt.Errorf("generation is %d", w.Generation)
		}
		if !controllerutil.ContainsFinalizer(&w, crFinalizer) {
			return fmt.Errorf("no finalizer %s in %v", crFinalizer, w.Finalizers)
		}
		if w.Status.ObservedGeneration != generation {
			return fmt.Errorf("status.observedGeneration is %d", w.Status.ObservedGeneration)
		}
		ready := meta.FindStatusCondition(w.Status.Conditions, crReadyType)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != generation {
			return fmt.Errorf("Ready condition is %+v", ready)
		}
		if w.Status.ConfigMapName != crConfigMapName(key.Name) {
			return fmt.Errorf("status.configMapName is %q", w.Status.ConfigMapName)
		}
		return nil
	})
}
