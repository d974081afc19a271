//lint:file-ignore SA1019 core v1 Endpoints are deprecated in kube, which still serves them: so does apictl.

// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go (ValidateEndpoints)
// and pkg/apis/discovery/validation/validation.go (ValidateEndpointSlice).

package registry

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// Limits of kube's EndpointSlice validation.
const (
	maxSliceEndpoints      = 1000
	maxSliceAddresses      = 100
	maxSlicePorts          = 20000
	maxSliceTopologyLabels = 16
	maxSliceZoneHints      = 8
	maxSliceNodeHints      = 8
)

var supportedAddressTypes = sets.New(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)

// endpointsRules are kube's for core v1 Endpoints. Left out: the endpoints-specific annotation
// (endpoints.kubernetes.io/last-change-trigger-time) check.
type endpointsRules struct{ noRules }

// setDefaults is kube's SetDefaults_Endpoints: ports are TCP unless said otherwise.
func (endpointsRules) setDefaults(obj runtime.Object) {
	e := obj.(*corev1.Endpoints)
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if p := &e.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

func (endpointsRules) validate(obj runtime.Object) field.ErrorList {
	return validateEndpointSubsets(obj.(*corev1.Endpoints).Subsets)
}

// validateUpdate lets unchanged subsets pass, as kube does: older servers may have stored data that
// today's rules refuse.
func (endpointsRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	e, o := obj.(*corev1.Endpoints), old.(*corev1.Endpoints)
	errs := validateEndpointSubsets(e.Subsets)
	if len(errs) > 0 && equality.Semantic.DeepEqual(e.Subsets, o.Subsets) {
		return nil
	}
	return errs
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range subsets {
		p := field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, p.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := utilvalidation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)
	if a.Hostname != "" {
		errs = append(errs, invalidEach(p.Child("hostname"), a.Hostname, utilvalidation.IsDNS1123Label(a.Hostname))...)
	}
	if a.NodeName != nil {
		errs = append(errs, invalidEach(p.Child("nodeName"), *a.NodeName, utilvalidation.IsDNS1123Subdomain(*a.NodeName))...)
	}
	return append(errs, ValidateEndpointIP(a.IP, p.Child("ip"))...)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, invalidEach(p.Child("name"), port.Name, utilvalidation.IsDNS1123Label(port.Name))...)
	}
	errs = append(errs, invalidEach(p.Child("port"), port.Port, utilvalidation.IsValidPortNum(int(port.Port)))...)
	errs = append(errs, validateProtocol(port.Protocol, p.Child("protocol"))...)
	if port.AppProtocol != nil {
		errs = append(errs, invalidEach(p.Child("appProtocol"), *port.AppProtocol, utilvalidation.IsQualifiedName(*port.AppProtocol))...)
	}
	return errs
}

// endpointSliceRules are kube's for discovery.k8s.io/v1 EndpointSlices.
type endpointSliceRules struct{}

// prepareCreate starts the generation, which kube's strategy counts for EndpointSlices.
func (endpointSliceRules) prepareCreate(obj runtime.Object) {
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

// prepareUpdate moves the generation on when anything but metadata, or the labels, changed.
func (endpointSliceRules) prepareUpdate(obj, old runtime.Object) {
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

// setDefaults is kube's SetDefaults_EndpointPort: a port without a name has the empty one, and TCP.
func (endpointSliceRules) setDefaults(obj runtime.Object) {
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

func (endpointSliceRules) validate(obj runtime.Object) field.ErrorList {
	s := obj.(*discoveryv1.EndpointSlice)
	errs := validateAddressType(s.AddressType)
	errs = append(errs, validateSlicePorts(s.Ports)...)
	return append(errs, validateSliceEndpoints(s.Endpoints, s.AddressType)...)
}

func (endpointSliceRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	errs := validateAddressType(s.AddressType)
	errs = append(errs, validateSlicePorts(s.Ports)...)
	// Unchanged endpoints pass, as kube lets them.
	if e := validateSliceEndpoints(s.Endpoints, s.AddressType); len(e) > 0 && !equality.Semantic.DeepEqual(s.Endpoints, o.Endpoints) {
		errs = append(errs, e...)
	}
	if s.AddressType != o.AddressType {
		// kube's declarative validation reports it without the value.
		errs = append(errs, field.Invalid(field.NewPath("addressType"), nil, "field is immutable"))
	}
	return errs
}

func validateAddressType(t discoveryv1.AddressType) field.ErrorList {
	switch {
	case t == "":
		return field.ErrorList{field.Required(field.NewPath("addressType"), "")}
	case !supportedAddressTypes.Has(t):
		return field.ErrorList{field.NotSupported(field.NewPath("addressType"), t, sets.List(supportedAddressTypes))}
	}
	return nil
}

func validateSlicePorts(ports []discoveryv1.EndpointPort) field.ErrorList {
	p := field.NewPath("ports")
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxSlicePorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, invalidEach(ip.Child("name"), name, utilvalidation.IsDNS1123Label(name))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
		}
		names.Insert(name)
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedPortProtocols.Has(*port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, sets.List(supportedPortProtocols)))
		}
		if port.AppProtocol != nil {
			errs = append(errs, invalidEach(ip.Child("appProtocol"), *port.AppProtocol, utilvalidation.IsQualifiedName(*port.AppProtocol))...)
		}
	}
	return errs
}

func validateSliceEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType) field.ErrorList {
	p := field.NewPath("endpoints")
	if len(endpoints) > maxSliceEndpoints {
		return field.ErrorList{field.TooMany(p, len(endpoints), maxSliceEndpoints)}
	}
	var errs field.ErrorList
	for i, e := range endpoints {
		ip := p.Index(i)
		addrs := ip.Child("addresses")
		if len(e.Addresses) == 0 {
			// kube's declarative validation reports it, without the handwritten detail.
			errs = append(errs, field.Required(addrs, ""))
		} else if len(e.Addresses) > maxSliceAddresses {
			errs = append(errs, field.TooMany(addrs, len(e.Addresses), maxSliceAddresses))
		}
		for j, a := range e.Addresses {
			errs = append(errs, validateSliceAddress(a, addrType, addrs, addrs.Index(j))...)
		}
		if e.NodeName != nil {
			errs = append(errs, invalidEach(ip.Child("nodeName"), *e.NodeName, utilvalidation.IsDNS1123Subdomain(*e.NodeName))...)
		}
		topo := ip.Child("deprecatedTopology")
		if len(e.DeprecatedTopology) > maxSliceTopologyLabels {
			errs = append(errs, field.TooMany(topo, len(e.DeprecatedTopology), maxSliceTopologyLabels))
		}
		errs = append(errs, metavalidation.ValidateLabels(e.DeprecatedTopology, topo)...)
		if e.Hostname != nil {
			errs = append(errs, invalidEach(ip.Child("hostname"), *e.Hostname, utilvalidation.IsDNS1123Label(*e.Hostname))...)
		}
		if e.Hints != nil {
			errs = append(errs, validateHints(e.Hints, ip.Child("hints"))...)
		}
	}
	return errs
}

// validateSliceAddress checks one address by the slice's type; kube reports a wrong family at the
// addresses list, not the address.
func validateSliceAddress(a string, t discoveryv1.AddressType, list, p *field.Path) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4:
		if errs := utilvalidation.IsValidIPForLegacyField(p, a, true, nil); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv4String(a) {
			errs = append(errs, field.Invalid(list, a, "must be an IPv4 address"))
		}
		return append(errs, ValidateEndpointIP(a, p)...)
	case discoveryv1.AddressTypeIPv6:
		if errs := utilvalidation.IsValidIP(p, a); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv6String(a) {
			errs = append(errs, field.Invalid(list, a, "must be an IPv6 address"))
		}
		return append(errs, ValidateEndpointIP(a, p)...)
	case discoveryv1.AddressTypeFQDN:
		return utilvalidation.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

func validateHints(h *discoveryv1.EndpointHints, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	zones := p.Child("forZones")
	if len(h.ForZones) > maxSliceZoneHints {
		return field.ErrorList{field.TooMany(zones, len(h.ForZones), maxSliceZoneHints)}
	}
	seen := sets.New[string]()
	for i, z := range h.ForZones {
		zp := zones.Index(i).Child("name")
		if seen.Has(z.Name) {
			errs = append(errs, field.Duplicate(zp, z.Name))
		}
		seen.Insert(z.Name)
		errs = append(errs, invalidEach(zp, z.Name, utilvalidation.IsValidLabelValue(z.Name))...)
	}
	nodes := p.Child("forNodes")
	if len(h.ForNodes) > maxSliceNodeHints {
		return append(errs, field.TooMany(nodes, len(h.ForNodes), maxSliceNodeHints))
	}
	seen = sets.New[string]()
	for i, n := range h.ForNodes {
		np := nodes.Index(i).Child("name")
		if seen.Has(n.Name) {
			errs = append(errs, field.Duplicate(np, n.Name))
		}
		seen.Insert(n.Name)
		errs = append(errs, invalidEach(np, n.Name, utilvalidation.IsDNS1123Subdomain(n.Name))...)
	}
	return errs
}

// The managed-by values of kube's controllers, whose IP addresses kube does not warn about.
const (
	endpointsManagedBy               = "endpoints.kubernetes.io/managed-by"
	endpointsController              = "endpoint-controller"
	endpointSliceController          = "endpointslice-controller.k8s.io"
	endpointSliceMirroringController = "endpointslicemirroring-controller.k8s.io"
)

func (endpointsRules) warningsOnCreate(obj runtime.Object) []string {
	return endpointsWarnings(obj.(*corev1.Endpoints))
}

func (endpointsRules) warningsOnUpdate(obj, _ runtime.Object) []string {
	return endpointsWarnings(obj.(*corev1.Endpoints))
}

// endpointsWarnings are kube's: addresses in a form it accepts only for compatibility.
func endpointsWarnings(e *corev1.Endpoints) []string {
	if e.Labels[endpointsManagedBy] == endpointsController {
		return nil
	}
	var warnings []string
	for i := range e.Subsets {
		for j, a := range e.Subsets[i].Addresses {
			warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("subsets").Index(i).Child("addresses").Index(j).Child("ip"), a.IP)...)
		}
		for j, a := range e.Subsets[i].NotReadyAddresses {
			warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("subsets").Index(i).Child("notReadyAddresses").Index(j).Child("ip"), a.IP)...)
		}
	}
	return warnings
}

// warningsOnCreate: FQDN slices are deprecated, and addresses may be in a form kube warns about.
func (endpointSliceRules) warningsOnCreate(obj runtime.Object) []string {
	eps := obj.(*discoveryv1.EndpointSlice)
	var warnings []string
	if eps.AddressType == discoveryv1.AddressTypeFQDN {
		warnings = append(warnings, field.NewPath("spec", "addressType").String()+": FQDN endpoints are deprecated")
	}
	return append(warnings, sliceIPWarnings(eps)...)
}

// warningsOnUpdate: kube warns about the address type on create only.
func (endpointSliceRules) warningsOnUpdate(obj, _ runtime.Object) []string {
	return sliceIPWarnings(obj.(*discoveryv1.EndpointSlice))
}

// sliceIPWarnings: kube also looks at the addresses of FQDN slices, where the IP parser finds nothing
// to warn about (and logs that it was asked); they are skipped here, with the same warnings.
func sliceIPWarnings(eps *discoveryv1.EndpointSlice) []string {
	if by := eps.Labels[discoveryv1.LabelManagedBy]; by == endpointSliceController || by == endpointSliceMirroringController ||
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
