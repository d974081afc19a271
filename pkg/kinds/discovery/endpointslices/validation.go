// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/discovery/validation/validation.go
// (ValidateEndpointSlice, ValidateEndpointSliceUpdate and what they call).

package endpointslices

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/apictl/apictl/pkg/kinds/validation"
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

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	s := obj.(*discoveryv1.EndpointSlice)
	errs := validateAddressType(s.AddressType)
	errs = append(errs, validateSlicePorts(s.Ports)...)
	return append(errs, validateSliceEndpoints(s.Endpoints, s.AddressType)...)
}

func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
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
			errs = append(errs, validation.Each(ip.Child("name"), name, utilvalidation.IsDNS1123Label(name))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
		}
		names.Insert(name)
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !validation.PortProtocols.Has(*port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, sets.List(validation.PortProtocols)))
		}
		if port.AppProtocol != nil {
			errs = append(errs, validation.Each(ip.Child("appProtocol"), *port.AppProtocol, utilvalidation.IsQualifiedName(*port.AppProtocol))...)
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
			errs = append(errs, validation.Each(ip.Child("nodeName"), *e.NodeName, utilvalidation.IsDNS1123Subdomain(*e.NodeName))...)
		}
		topo := ip.Child("deprecatedTopology")
		if len(e.DeprecatedTopology) > maxSliceTopologyLabels {
			errs = append(errs, field.TooMany(topo, len(e.DeprecatedTopology), maxSliceTopologyLabels))
		}
		errs = append(errs, metavalidation.ValidateLabels(e.DeprecatedTopology, topo)...)
		if e.Hostname != nil {
			errs = append(errs, validation.Each(ip.Child("hostname"), *e.Hostname, utilvalidation.IsDNS1123Label(*e.Hostname))...)
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
		return append(errs, validation.EndpointIP(a, p)...)
	case discoveryv1.AddressTypeIPv6:
		if errs := utilvalidation.IsValidIP(p, a); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv6String(a) {
			errs = append(errs, field.Invalid(list, a, "must be an IPv6 address"))
		}
		return append(errs, validation.EndpointIP(a, p)...)
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
		errs = append(errs, validation.Each(zp, z.Name, utilvalidation.IsValidLabelValue(z.Name))...)
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
		errs = append(errs, validation.Each(np, n.Name, utilvalidation.IsDNS1123Subdomain(n.Name))...)
	}
	return errs
}
