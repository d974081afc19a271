// Package endpointslices is the discovery.k8s.io/v1 EndpointSlice kind: its route-model entry,
// decoding defaults, generation, validation, warnings and printer. The controllers that write
// EndpointSlices are pkg/controllers/endpoints.
package endpointslices

import (
	"reflect"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes EndpointSlices.
func Kind() kinds.Kind {
	doc := discoveryv1.EndpointSlice{}.SwaggerDoc()
	return kinds.Kind{
		Group:   discoveryv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "endpointslices",
			Singular:   "endpointslice",
			Kind:       "EndpointSlice",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(),
				model.PathColumn("AddressType", doc["addressType"], 0, ".addressType"),
				model.ComputedColumn("Ports", doc["ports"], 0),
				model.ComputedColumn("Endpoints", doc["endpoints"], 0),
				model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[discoveryv1.EndpointSlice](),
			ListGoType: reflect.TypeFor[discoveryv1.EndpointSliceList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("AddressType", doc["addressType"]),
				printers.Column("Ports", doc["ports"]),
				printers.Column("Endpoints", doc["endpoints"]),
				printers.AgeColumn(),
			},
			Cells: printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/discovery/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_EndpointPort"},
			{Path: "pkg/apis/discovery/validation/validation.go", Version: "v1.37.2", Parts: "ValidateEndpointSlice, ValidateEndpointSliceUpdate and what they call (validation.go)"},
			{Path: "pkg/registry/discovery/endpointslice/strategy.go", Version: "v1.37.2", Parts: "PrepareForCreate, PrepareForUpdate (generation), WarningsOnCreate, WarningsOnUpdate"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printEndpointSlice"},
		},
	}
}

// strategy is kube's for discovery.k8s.io/v1 EndpointSlices.
type strategy struct{}

// PrepareForCreate starts the generation, which kube's strategy counts for EndpointSlices.
func (strategy) PrepareForCreate(obj runtime.Object) {
	s := obj.(*discoveryv1.EndpointSlice)
	s.Generation = 1
	emptyListsToNull(s)
}

// emptyListsToNull stores empty endpoints and ports as none, which is how kube answers them: its
// protobuf storage tells no empty list from a missing one ("endpoints": null, as in the placeholder
// slices of the EndpointSlice controller). It runs after managedFields are computed, which own the
// empty lists as kube's do.
func emptyListsToNull(s *discoveryv1.EndpointSlice) {
	if len(s.Endpoints) == 0 {
		s.Endpoints = nil
	}
	if len(s.Ports) == 0 {
		s.Ports = nil
	}
}

// PrepareForUpdate moves the generation on when anything but metadata, or the labels, changed.
func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	s, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	emptyListsToNull(s)
	s.Generation = o.Generation
	sc, oc := *s, *o
	sc.ObjectMeta, oc.ObjectMeta = metav1.ObjectMeta{}, metav1.ObjectMeta{}
	sc.TypeMeta, oc.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
	if !equality.Semantic.DeepEqual(sc, oc) || !equality.Semantic.DeepEqual(s.Labels, o.Labels) {
		s.Generation = o.Generation + 1
	}
}

// Default is kube's SetDefaults_EndpointPort: a port without a name has the empty one, and TCP.
func (strategy) Default(obj runtime.Object) {
	s := obj.(*discoveryv1.EndpointSlice)
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
	}
}

// The managed-by values of kube's controllers, whose IP addresses kube does not warn about.
const (
	sliceController          = "endpointslice-controller.k8s.io"
	sliceMirroringController = "endpointslicemirroring-controller.k8s.io"
)

// WarningsOnCreate: FQDN slices are deprecated, and addresses may be in a form kube warns about.
func (strategy) WarningsOnCreate(obj runtime.Object) []string {
	eps := obj.(*discoveryv1.EndpointSlice)
	var warnings []string
	if eps.AddressType == discoveryv1.AddressTypeFQDN {
		warnings = append(warnings, field.NewPath("spec", "addressType").String()+": FQDN endpoints are deprecated")
	}
	return append(warnings, ipWarnings(eps)...)
}

// WarningsOnUpdate: kube warns about the address type on create only.
func (strategy) WarningsOnUpdate(obj, _ runtime.Object) []string {
	return ipWarnings(obj.(*discoveryv1.EndpointSlice))
}

// ipWarnings: kube also looks at the addresses of FQDN slices, where the IP parser finds nothing
// to warn about (and logs that it was asked); they are skipped here, with the same warnings.
func ipWarnings(eps *discoveryv1.EndpointSlice) []string {
	if by := eps.Labels[discoveryv1.LabelManagedBy]; by == sliceController || by == sliceMirroringController ||
		eps.AddressType == discoveryv1.AddressTypeFQDN {
		return nil
	}
	var warnings []string
	for i := range eps.Endpoints {
		for j, addr := range eps.Endpoints[i].Addresses {
			warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), addr)...)
		}
	}
	return warnings
}

func cells(s *discoveryv1.EndpointSlice, now time.Time) []any {
	var ports, endpoints []string
	for _, p := range s.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	for _, e := range s.Endpoints {
		endpoints = append(endpoints, e.Addresses...)
	}
	return []any{s.Name, string(s.AddressType), printers.ListWithMore(ports), printers.ListWithMore(endpoints), printers.Age(s.CreationTimestamp, now)}
}
