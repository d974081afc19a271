// Package namespaces is the core v1 Namespace kind: its route-model entry with the status and
// finalize subresources, decoding defaults, create and update rules, validation, status and
// finalize writes, and printer. What deletes a namespace's contents is the namespace controller
// (pkg/serve/handlers, for now).
package namespaces

import (
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes Namespaces: cluster-scoped, named by DNS-1123 labels, never deleted as a
// collection, with status and finalize subresources (finalize takes only updates), and answered
// with the deleted object on delete.
func Kind() kinds.Kind {
	ns := reflect.TypeFor[corev1.Namespace]()
	const statusDoc = "The status of the namespace"
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "namespaces",
			Singular:   "namespace",
			Kind:       "Namespace",
			Verbs:      []string{model.VerbCreate, model.VerbDelete, model.VerbGet, model.VerbList, model.VerbPatch, model.VerbUpdate, model.VerbWatch},
			ShortNames: []string{"ns"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.PathColumn("Status", statusDoc, 0, ".status.phase"), model.AgeColumn(),
			},
			Subresources: []model.Subresource{
				{Name: "finalize", Kind: "Namespace", Verbs: []string{model.VerbUpdate}, GoType: ns},
				{Name: "status", Kind: "Namespace", Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: ns},
			},
			GoType:     ns,
			ListGoType: reflect.TypeFor[corev1.NamespaceList](),
		},
		NameRule: apivalidation.NameIsDNSLabel,
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("Status", statusDoc), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Store:  kinds.StoreRules{ReturnDeletedObject: true},
		Fields: &kinds.FieldSelectors{Names: []string{"status.phase"}, New: func() kinds.FieldReading { return new(reading) }},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/core/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_Namespace, SetDefaults_NamespaceStatus"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateNamespace, ValidateNamespaceUpdate, ValidateNamespaceStatusUpdate, ValidateNamespaceFinalizeUpdate"},
			{Path: "pkg/registry/core/namespace/strategy.go", Version: "v1.37.2", Parts: "namespaceStrategy, namespaceStatusStrategy, namespaceFinalizeStrategy, NamespaceToSelectableFields"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printNamespace"},
		},
	}
}

// reading is what a stored Namespace is selected by: its phase.
type reading struct {
	kinds.SelectableMeta
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

func (r *reading) AddFields(set fields.Set) { set["status.phase"] = r.Status.Phase }

func cells(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), printers.Age(ns.CreationTimestamp, now)}
}

// strategy: a new namespace is Active with the kubernetes finalizer; updates of the main resource
// keep status and finalizers, as kube's namespace strategy does.
type strategy struct{}

// Default labels a namespace with its name and makes an unset phase Active as it is decoded, as
// kube's defaulting does, so that the label is the writer's in managedFields.
func (strategy) Default(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Name != "" {
		setNameLabel(ns)
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

func (strategy) PrepareForCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	// Again after decoding: a generated name was not known then. kube's strategy does the same in
	// Canonicalize.
	setNameLabel(ns)
}

func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Status = oldNS.Status
	// Finalizers are changed through /finalize only.
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	setNameLabel(ns)
}

// setNameLabel sets kubernetes.io/metadata.name, which selectors such as a NetworkPolicy's
// namespaceSelector rely on; the server owns it, so a write cannot change or remove it.
func setNameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	var errs field.ErrorList
	for i, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), field.NewPath("spec", "finalizers").Index(i))...)
	}
	return errs
}

func (s strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList { return s.Validate(obj) }

// PrepareForStatusUpdate keeps the spec of old, as kube's namespace status strategy does
// (it resets only the spec): a status write, a server-side apply included, may change labels and
// annotations.
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := obj.(*corev1.Namespace).DeepCopy()
	out.Spec = old.(*corev1.Namespace).Spec
	setNameLabel(out)
	return out
}

// ValidateStatusUpdate allows the phase that goes with the deletionTimestamp, as kube does.
func (strategy) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	phase := field.NewPath("status", "Phase")
	switch {
	case ns.DeletionTimestamp.IsZero() && ns.Status.Phase != corev1.NamespaceActive:
		return field.ErrorList{field.Invalid(phase, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
	case !ns.DeletionTimestamp.IsZero() && ns.Status.Phase != corev1.NamespaceTerminating:
		return field.ErrorList{field.Invalid(phase, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

// WritesSubresource: finalize is the namespace's own subresource write (kinds.SubresourceStrategy).
func (strategy) WritesSubresource(sub string) bool { return sub == "finalize" }

// PrepareForSubresourceUpdate keeps everything of old but spec.finalizers, as a write to
// namespaces/{name}/finalize does.
func (strategy) PrepareForSubresourceUpdate(_ string, obj, old runtime.Object) runtime.Object {
	out := old.(*corev1.Namespace).DeepCopy()
	out.Spec.Finalizers = obj.(*corev1.Namespace).Spec.Finalizers
	return out
}

// ValidateSubresourceUpdate checks the finalizers' names, as kube's ValidateNamespaceFinalizeUpdate
// does.
func (s strategy) ValidateSubresourceUpdate(_ string, obj, _ runtime.Object) field.ErrorList {
	return s.Validate(obj)
}
