// Package leases is the coordination.k8s.io/v1 Lease kind, which leader election and apictl's
// identity and etcd-member leases (pkg/controllers/leases) are made of: its route-model entry,
// validation and printer.
package leases

import (
	"reflect"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes Leases.
func Kind() kinds.Kind {
	holder := coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]
	return kinds.Kind{
		Group:   coordinationv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "leases",
			Singular:   "lease",
			Kind:       "Lease",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.PathColumn("Holder", holder, 0, ".spec.holderIdentity"), model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[coordinationv1.Lease](),
			ListGoType: reflect.TypeFor[coordinationv1.LeaseList](),
		},
		Strategy: strategy{},
		// kube's lease strategy: a PUT may create, and must name the resourceVersion it replaces.
		Store: kinds.StoreRules{AllowCreateOnUpdate: true, RequireResourceVersion: true},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("Holder", holder), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/coordination/validation/validation.go", Version: "v1.37.2", Parts: "ValidateLeaseSpec: leaseDurationSeconds and leaseTransitions"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printLease"},
		},
	}
}

func cells(l *coordinationv1.Lease, now time.Time) []any {
	var holder string
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{l.Name, holder, printers.Age(l.CreationTimestamp, now)}
}

// strategy checks the numbers leader election relies on.
type strategy struct{}

func (strategy) PrepareForCreate(runtime.Object)                 {}
func (strategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	l := obj.(*coordinationv1.Lease)
	var errs field.ErrorList
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := l.Spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	return errs
}

func (s strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList { return s.Validate(obj) }
