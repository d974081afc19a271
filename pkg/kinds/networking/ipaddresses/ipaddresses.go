// Package ipaddresses is the networking.k8s.io/v1 IPAddress kind: one object per IP address taken,
// named by the address. apictl's service allocator (pkg/allocator) takes a cluster IP by creating
// the IPAddress of it, as kube-apiserver's does since 1.33, and an IPAddress created by hand keeps
// its address from every Service.
package ipaddresses

// Ported from k8s.io/kubernetes v1.37.2 pkg/registry/networking/ipaddress/strategy.go,
// pkg/apis/networking/validation/validation.go (ValidateIPAddressName, ValidateIPAddress,
// validateIPAddressParentReference, ValidateIPAddressUpdate) and pkg/printers/internalversion/printers.go
// (printIPAddress).

import (
	"reflect"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes IPAddresses.
func Kind() kinds.Kind {
	doc := networkingv1.IPAddressSpec{}.SwaggerDoc()
	return kinds.Kind{
		Group:   networkingv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "ipaddresses",
			Singular:   "ipaddress",
			Kind:       "IPAddress",
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"ip"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("ParentRef", doc["parentRef"], 0),
			},
			GoType:     reflect.TypeFor[networkingv1.IPAddress](),
			ListGoType: reflect.TypeFor[networkingv1.IPAddressList](),
		},
		NameRule: ValidateName,
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("ParentRef", doc["parentRef"])},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/networking/ipaddress/strategy.go", Version: "v1.37.2", Parts: "ipAddressStrategy"},
			{Path: "pkg/apis/networking/validation/validation.go", Version: "v1.37.2", Parts: "ValidateIPAddressName, ValidateIPAddress, validateIPAddressParentReference, ValidateIPAddressUpdate"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printIPAddress"},
		},
	}
}

// cells are printIPAddress's. kube's row has an age beyond its two columns; it is kept, as kube
// answers it.
func cells(ip *networkingv1.IPAddress, now time.Time) []any {
	parent := "<none>"
	if ref := ip.Spec.ParentRef; ref != nil {
		parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
		if ref.Namespace != "" {
			parent += "/" + ref.Namespace
		}
		parent += "/" + ref.Name
	}
	return []any{ip.Name, parent, printers.Age(ip.CreationTimestamp, now)}
}

// ValidateName is ValidateIPAddressName: the name is an IP address in its canonical form (no
// leading zeros, IPv6 in lower case and shortest form), so that one address has one object.
func ValidateName(name string, _ bool) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}

// strategy is kube's ipAddressStrategy: nothing to prepare; the parent reference is required and
// immutable.
type strategy struct{}

func (strategy) PrepareForCreate(runtime.Object)                 {}
func (strategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateParentRef(obj.(*networkingv1.IPAddress).Spec.ParentRef, field.NewPath("spec"))
}

func (s strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	ip, oldIP := obj.(*networkingv1.IPAddress), old.(*networkingv1.IPAddress)
	errs := s.Validate(obj)
	// kube's declarative validation answers this one, with no value.
	if !apiequality.Semantic.DeepEqual(ip.Spec.ParentRef, oldIP.Spec.ParentRef) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "parentRef"), nil, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateParentRef is validateIPAddressParentReference. kube's declarative validation answers the
// required fields, after the hand-written errors: they come last here too.
func validateParentRef(ref *networkingv1.ParentReference, path *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(path.Child("parentRef"), "")}
	}
	path = path.Child("parentRef")
	var errs, required field.ErrorList
	// The core group of Services is the empty string, so a group cannot be required.
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(path.Child("group"), ref.Group, msg))
		}
	}
	segment := func(name, value string, isRequired bool) {
		if value == "" {
			if isRequired {
				required = append(required, field.Required(path.Child(name), ""))
			}
			return
		}
		for _, msg := range content.IsPathSegmentName(value) {
			errs = append(errs, field.Invalid(path.Child(name), value, msg))
		}
	}
	segment("resource", ref.Resource, true)
	segment("name", ref.Name, true)
	segment("namespace", ref.Namespace, false)
	return append(errs, required...)
}
