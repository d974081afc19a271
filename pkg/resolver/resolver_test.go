package resolver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiproxy "k8s.io/apiserver/pkg/util/proxy"
	listersv1 "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func service(name string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       corev1.ServiceSpec{Type: typ, Ports: ports, ClusterIP: "10.0.0.10", ExternalName: "localhost"},
	}
}

func slice(name, service, portName string, port int32, ready *bool, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ready}})
	}
	return s
}

func newResolver(t *testing.T, objs ...any) *Resolver {
	t.Helper()
	services := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Service:
			err = services.Add(o)
		case *discoveryv1.EndpointSlice:
			err = slices.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	getter, err := apiproxy.NewEndpointSliceListerGetter(discoverylisters.NewEndpointSliceLister(slices))
	if err != nil {
		t.Fatal(err)
	}
	return New(listersv1.NewServiceLister(services), getter)
}

func TestResolveEndpoint(t *testing.T) {
	https := corev1.ServicePort{Name: "https", Port: 443}
	tests := []struct {
		name    string
		objs    []any
		service string
		port    int32
		want    string
		wantErr string
	}{
		{name: "ready endpoint on the port of the same name", service: "api", port: 443,
			objs: []any{service("api", corev1.ServiceTypeClusterIP, https), slice("api-1", "api", "https", 8443, ptr.To(true), "10.1.0.5")},
			want: "https://10.1.0.5:8443"},
		{name: "ready unset counts as ready", service: "api", port: 443,
			objs: []any{service("api", corev1.ServiceTypeNodePort, https), slice("api-1", "api", "https", 8443, nil, "10.1.0.6")},
			want: "https://10.1.0.6:8443"},
		{name: "unready endpoints are skipped", service: "api", port: 443,
			objs: []any{service("api", corev1.ServiceTypeClusterIP, https),
				slice("api-1", "api", "https", 8443, ptr.To(false), "10.1.0.7"), slice("api-2", "api", "https", 9443, ptr.To(true), "10.1.0.8")},
			want: "https://10.1.0.8:9443"},
		{name: "external name", service: "local", port: 6443, objs: []any{service("local", corev1.ServiceTypeExternalName)},
			want: "https://localhost:6443"},
		{name: "no service", service: "missing", port: 443, wantErr: `service "missing" not found`},
		{name: "no such port", service: "api", port: 80,
			objs:    []any{service("api", corev1.ServiceTypeClusterIP, https), slice("api-1", "api", "https", 8443, ptr.To(true), "10.1.0.5")},
			wantErr: `no service port 80 found for service "api"`},
		{name: "no endpoints", service: "api", port: 443, objs: []any{service("api", corev1.ServiceTypeClusterIP, https)},
			wantErr: `no endpoints available for service "api"`},
		{name: "only unready endpoints", service: "api", port: 443,
			objs:    []any{service("api", corev1.ServiceTypeClusterIP, https), slice("api-1", "api", "https", 8443, ptr.To(false), "10.1.0.5")},
			wantErr: `no endpoints available for service "api"`},
		{name: "endpoint port of another name", service: "api", port: 443,
			objs:    []any{service("api", corev1.ServiceTypeClusterIP, https), slice("api-1", "api", "metrics", 8443, ptr.To(true), "10.1.0.5")},
			wantErr: `no endpoints available for service "api"`},
		{name: "slices of another service", service: "api", port: 443,
			objs:    []any{service("api", corev1.ServiceTypeClusterIP, https), slice("other-1", "other", "https", 8443, ptr.To(true), "10.1.0.5")},
			wantErr: `no endpoints available for service "api"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := newResolver(t, tt.objs...).ResolveEndpoint("ns", tt.service, tt.port)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != tt.want {
				t.Errorf("got %s, want %s", u, tt.want)
			}
		})
	}
}
