// Package resolver turns a service reference (namespace, name, port) into the URL of one of the
// service's backends. The webhook clients and the aggregator's proxy both use it, so that an
// APIService and a webhook reach a service the same way.
package resolver

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apiproxy "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/webhook"
	listersv1 "k8s.io/client-go/listers/core/v1"
)

// Resolver routes by endpoints, as kube-apiserver with --enable-aggregator-routing does: a
// ClusterIP, NodePort or LoadBalancer service resolves to a ready address of its EndpointSlices, on
// the endpoint port named like the service port. Unlike kube with that flag, a service of type
// ExternalName resolves to https://<externalName>:<port>, as kube does without it: EndpointSlices
// refuse loopback addresses, so a backend on the server's own machine is reached through an
// ExternalName service (externalName: localhost).
type Resolver struct {
	services listersv1.ServiceLister
	slices   apiproxy.EndpointSliceGetter
}

var _ webhook.ServiceResolver = (*Resolver)(nil)

// New returns a resolver that reads services and their EndpointSlices from the given caches.
func New(services listersv1.ServiceLister, slices apiproxy.EndpointSliceGetter) *Resolver {
	return &Resolver{services: services, slices: slices}
}

// ResolveEndpoint returns the https URL (scheme and host only) of a backend of the service's port.
// Its errors are kube's: the lister's NotFound for a missing service, a ServiceUnavailable error
// naming the port or the service when no port matches or no endpoint is ready.
func (r *Resolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	svc, err := r.services.Services(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if svc.Spec.ExternalName == "" {
			return nil, fmt.Errorf("service %s/%s of type ExternalName has no externalName", namespace, name)
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return apiproxy.ResolveEndpoint(r.services, r.slices, namespace, name, port)
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
}
