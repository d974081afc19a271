// Package servicecidrs is the networking.k8s.io/v1 ServiceCIDR kind: the ranges ClusterIPs are
// allocated from. The server keeps the default one, "kubernetes", made from
// --service-cluster-ip-range (DefaultController); the service-cidr-controller keeps every one's
// Ready condition and the finalizer that holds a deleted one while IPs in it have no other range.
package servicecidrs

// Ported from k8s.io/kubernetes v1.37.2 pkg/registry/networking/servicecidr/strategy.go,
// pkg/apis/networking/validation/validation.go (ValidateServiceCIDR, validateServiceCIDRSpec,
// ValidateServiceCIDRUpdate, ValidateServiceCIDRStatusUpdate) and
// pkg/printers/internalversion/printers.go (printServiceCIDR).

import (
	"reflect"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes ServiceCIDRs.
func Kind() kinds.Kind {
	doc := networkingv1.ServiceCIDRSpec{}.SwaggerDoc()
	return kinds.Kind{
		Group:   networkingv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:   "servicecidrs",
			Singular: "servicecidr",
			Kind:     "ServiceCIDR",
			Verbs:    model.StandardVerbs(),
			Subresources: []model.Subresource{{Name: "status", Kind: "ServiceCIDR",
				Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: reflect.TypeFor[networkingv1.ServiceCIDR]()}},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("CIDRs", doc["cidrs"], 0), model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[networkingv1.ServiceCIDR](),
			ListGoType: reflect.TypeFor[networkingv1.ServiceCIDRList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("CIDRs", doc["cidrs"]), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Controllers: []kinds.Controller{{Name: ControllerName, New: newController}},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/networking/servicecidr/strategy.go", Version: "v1.37.2", Parts: "serviceCIDRStrategy, serviceCIDRStatusStrategy (ServiceCIDRStatusFieldWiping on)"},
			{Path: "pkg/apis/networking/validation/validation.go", Version: "v1.37.2", Parts: "ValidateServiceCIDR, validateServiceCIDRSpec, ValidateServiceCIDRUpdate, ValidateServiceCIDRStatusUpdate"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printServiceCIDR"},
			{Path: "pkg/controlplane/controller/defaultservicecidr/default_servicecidr_controller.go", Version: "v1.37.2", Parts: "the default ServiceCIDR (defaultcontroller.go)"},
			{Path: "pkg/controller/servicecidrs/servicecidrs_controller.go", Version: "v1.37.2", Parts: "service-cidr-controller (controller.go)"},
		},
	}
}

func cells(c *networkingv1.ServiceCIDR, now time.Time) []any {
	return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), printers.Age(c.CreationTimestamp, now)}
}

// strategy is kube's serviceCIDRStrategy with ServiceCIDRStatusFieldWiping on (its default since
// 1.36): the main resource neither sets nor changes status.
type strategy struct {
	kinds.StatusSubresource[*networkingv1.ServiceCIDR, networkingv1.ServiceCIDRStatus, fields]
}

// fields says where the kind keeps its status and spec, for kinds.StatusSubresource.
type fields struct{}

var _ kinds.StatusFields[*networkingv1.ServiceCIDR, networkingv1.ServiceCIDRStatus] = fields{}

func (fields) Status(o *networkingv1.ServiceCIDR) *networkingv1.ServiceCIDRStatus { return &o.Status }

// Spec is nil: kube's strategy of the kind leaves the generation alone.
func (fields) Spec(*networkingv1.ServiceCIDR) any { return nil }

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateSpec(&obj.(*networkingv1.ServiceCIDR).Spec, field.NewPath("spec", "cidrs"))
}

// ValidateUpdate is ValidateServiceCIDRUpdate: the CIDRs are immutable, but a single-stack one may
// gain a CIDR of the other family.
func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR)
	path := field.NewPath("spec", "cidrs")
	var errs field.ErrorList
	switch {
	case len(oldC.Spec.CIDRs) == len(c.Spec.CIDRs):
		for i, cidr := range oldC.Spec.CIDRs {
			if cidr != c.Spec.CIDRs[i] {
				errs = append(errs, field.Invalid(path.Index(i), c.Spec.CIDRs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
	case len(oldC.Spec.CIDRs) == 1 && len(c.Spec.CIDRs) == 2:
		if c.Spec.CIDRs[0] != oldC.Spec.CIDRs[0] {
			errs = append(errs, field.Invalid(path.Index(0), c.Spec.CIDRs[0], apivalidation.FieldImmutableErrorMsg))
		}
		errs = append(errs, validateSpec(&c.Spec, path)...)
	default:
		errs = append(errs, field.Invalid(path, c.Spec.CIDRs, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// ValidateStatusUpdate is ValidateServiceCIDRStatusUpdate: only the metadata checks, which the
// generic layer runs.
func (strategy) ValidateStatusUpdate(runtime.Object, runtime.Object) field.ErrorList { return nil }

// validateSpec is validateServiceCIDRSpec: one or two valid CIDRs, of different families.
func validateSpec(spec *networkingv1.ServiceCIDRSpec, path *field.Path) field.ErrorList {
	switch {
	case len(spec.CIDRs) == 0:
		return field.ErrorList{field.Required(path, "at least one CIDR required")}
	case len(spec.CIDRs) > 2:
		// kube shows its internal spec, whose field has no JSON name.
		return field.ErrorList{field.Invalid(path, struct{ CIDRs []string }{spec.CIDRs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, cidr := range spec.CIDRs {
		errs = append(errs, validation.IsValidCIDR(path.Index(i), cidr)...)
	}
	if len(spec.CIDRs) == 2 {
		f0, f1 := netutils.IPFamilyOfCIDRString(spec.CIDRs[0]), netutils.IPFamilyOfCIDRString(spec.CIDRs[1])
		if f0 == f1 && f0 != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(path, spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}
