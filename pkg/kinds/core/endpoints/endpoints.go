//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

// Package endpoints is the core v1 Endpoints kind: its route-model entry (deprecated, as kube has
// it), decoding defaults, validation, warnings and printer. The endpoint controllers that write
// Endpoints are pkg/controllers/endpoints.
package endpoints

import (
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/deprecation"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/kinds/validation"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes Endpoints: singular and plural at once ("endpoints"), as kube names it. kube
// deprecated it in 1.33 in favour of EndpointSlices, and says so on every request, in the words of
// k8s.io/apiserver's deprecation package.
func Kind() kinds.Kind {
	doc := corev1.Endpoints{}.SwaggerDoc()
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "endpoints",
			Singular:   "endpoints",
			Kind:       "Endpoints",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"ep"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("Endpoints", doc["subsets"], 0), model.AgeColumn(),
			},
			GoType:             reflect.TypeFor[corev1.Endpoints](),
			ListGoType:         reflect.TypeFor[corev1.EndpointsList](),
			Deprecated:         true,
			DeprecationWarning: deprecation.WarningMessage(&corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}}),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("Endpoints", doc["subsets"]), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/core/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_Endpoints"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateEndpoints, ValidateEndpointsUpdate"},
			{Path: "pkg/registry/core/endpoint/strategy.go", Version: "v1.37.2", Parts: "WarningsOnCreate, WarningsOnUpdate"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printEndpoints, formatEndpoints"},
		},
	}
}

// strategy is kube's for core v1 Endpoints. Left out: the endpoints-specific annotation
// (endpoints.kubernetes.io/last-change-trigger-time) check.
type strategy struct{}

// Default is kube's SetDefaults_Endpoints: ports are TCP unless said otherwise.
func (strategy) Default(obj runtime.Object) {
	e := obj.(*corev1.Endpoints)
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if p := &e.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

func (strategy) PrepareForCreate(runtime.Object)                 {}
func (strategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateSubsets(obj.(*corev1.Endpoints).Subsets)
}

// ValidateUpdate lets unchanged subsets pass, as kube does: older servers may have stored data that
// today's rules refuse.
func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	e, o := obj.(*corev1.Endpoints), old.(*corev1.Endpoints)
	errs := validateSubsets(e.Subsets)
	if len(errs) > 0 && equality.Semantic.DeepEqual(e.Subsets, o.Subsets) {
		return nil
	}
	return errs
}

func validateSubsets(subsets []corev1.EndpointSubset) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range subsets {
		p := field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateAddress(&ss.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateAddress(&ss.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validatePort(&ss.Ports[j], len(ss.Ports) > 1, p.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := utilvalidation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)
	if a.Hostname != "" {
		errs = append(errs, validation.Each(p.Child("hostname"), a.Hostname, utilvalidation.IsDNS1123Label(a.Hostname))...)
	}
	if a.NodeName != nil {
		errs = append(errs, validation.Each(p.Child("nodeName"), *a.NodeName, utilvalidation.IsDNS1123Subdomain(*a.NodeName))...)
	}
	return append(errs, validation.EndpointIP(a.IP, p.Child("ip"))...)
}

func validatePort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, validation.Each(p.Child("name"), port.Name, utilvalidation.IsDNS1123Label(port.Name))...)
	}
	errs = append(errs, validation.Each(p.Child("port"), port.Port, utilvalidation.IsValidPortNum(int(port.Port)))...)
	errs = append(errs, validation.Protocol(port.Protocol, p.Child("protocol"))...)
	if port.AppProtocol != nil {
		errs = append(errs, validation.Each(p.Child("appProtocol"), *port.AppProtocol, utilvalidation.IsQualifiedName(*port.AppProtocol))...)
	}
	return errs
}

// The managed-by label of kube's Endpoints controller, whose IP addresses kube does not warn about.
const (
	managedBy  = "endpoints.kubernetes.io/managed-by"
	controller = "endpoint-controller"
)

func (strategy) WarningsOnCreate(obj runtime.Object) []string {
	return warnings(obj.(*corev1.Endpoints))
}

func (strategy) WarningsOnUpdate(obj, _ runtime.Object) []string {
	return warnings(obj.(*corev1.Endpoints))
}

// warnings are kube's: addresses in a form it accepts only for compatibility.
func warnings(e *corev1.Endpoints) []string {
	if e.Labels[managedBy] == controller {
		return nil
	}
	var out []string
	for i := range e.Subsets {
		for j, a := range e.Subsets[i].Addresses {
			out = append(out, utilvalidation.GetWarningsForIP(field.NewPath("subsets").Index(i).Child("addresses").Index(j).Child("ip"), a.IP)...)
		}
		for j, a := range e.Subsets[i].NotReadyAddresses {
			out = append(out, utilvalidation.GetWarningsForIP(field.NewPath("subsets").Index(i).Child("notReadyAddresses").Index(j).Child("ip"), a.IP)...)
		}
	}
	return out
}

func cells(e *corev1.Endpoints, now time.Time) []any {
	return []any{e.Name, formatEndpoints(e), printers.Age(e.CreationTimestamp, now)}
}

// formatEndpoints is kube's: host:port for every address and port of every subset (bare addresses for
// a subset without ports), the first three and a count of the rest.
func formatEndpoints(e *corev1.Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < printers.MaxListed {
			list = append(list, s)
		}
	}
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	out := strings.Join(list, ",")
	if count > printers.MaxListed {
		return fmt.Sprintf("%s + %d more...", out, count-printers.MaxListed)
	}
	return out
}
