// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go (ValidateEndpointIP,
// and the protocol check of validateServicePort and validateEndpointPort), which Services,
// Endpoints and EndpointSlices share.

package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// PortProtocols are the protocols a service or endpoint port may name.
var PortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

// Each turns the messages of one of apimachinery's Is* checks into Invalid errors of value at p.
func Each(p *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, value, m))
	}
	return errs
}

// Protocol checks a port's protocol: required, and one of PortProtocols.
func Protocol(proto corev1.Protocol, p *field.Path) field.ErrorList {
	if proto == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !PortProtocols.Has(proto) {
		return field.ErrorList{field.NotSupported(p, proto, sets.List(PortProtocols))}
	}
	return nil
}

// EndpointIP is kube's ValidateEndpointIP: endpoint addresses (and external IPs) may not be
// unspecified, loopback or link-local.
func EndpointIP(ip string, p *field.Path) field.ErrorList {
	parsed := netutils.ParseIPSloppy(ip)
	if parsed == nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if parsed.IsUnspecified() {
		errs = append(errs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if parsed.IsLoopback() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if parsed.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if parsed.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}
