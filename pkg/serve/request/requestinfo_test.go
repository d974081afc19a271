package request

import (
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestNewRequestInfo(t *testing.T) {
	tests := []struct {
		method, url string
		want        RequestInfo
	}{
		{"GET", "/healthz", RequestInfo{Path: "/healthz", Verb: "get"}},
		{"GET", "/apis/apps", RequestInfo{Path: "/apis/apps", Verb: "get"}},
		{"GET", "/apis/apps/v1", RequestInfo{Path: "/apis/apps/v1", Verb: "get"}},
		{"GET", "/api/v1/namespaces/ns/configmaps", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns/configmaps",
			Verb: "list", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Parts: []string{"configmaps"}}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns/configmaps",
			Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Parts: []string{"configmaps"}}},
		// kube reads a present but empty boolean as true, and only 0 and false as false.
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns/configmaps",
			Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Parts: []string{"configmaps"}}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=FALSE", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns/configmaps",
			Verb: "list", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Parts: []string{"configmaps"}}},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=1&fieldSelector=metadata.name%3Dx", RequestInfo{IsResourceRequest: true,
			Path: "/api/v1/namespaces/ns/configmaps", Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps",
			Name: "x", Parts: []string{"configmaps"}}},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/x", RequestInfo{IsResourceRequest: true, Path: "/api/v1/watch/namespaces/ns/configmaps/x",
			Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "configmaps", Name: "x", Parts: []string{"configmaps", "x"}}},
		{"DELETE", "/apis/coordination.k8s.io/v1/namespaces/ns/leases", RequestInfo{IsResourceRequest: true,
			Path: "/apis/coordination.k8s.io/v1/namespaces/ns/leases", Verb: "deletecollection", APIPrefix: "apis", APIGroup: "coordination.k8s.io",
			APIVersion: "v1", Namespace: "ns", Resource: "leases", Parts: []string{"leases"}}},
		{"PUT", "/api/v1/namespaces/ns/finalize", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns/finalize", Verb: "update",
			APIPrefix: "api", APIVersion: "v1", Namespace: "ns", Resource: "namespaces", Name: "ns", Subresource: "finalize",
			Parts: []string{"namespaces", "ns", "finalize"}}},
		{"GET", "/api/v1/namespaces/ns", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/ns", Verb: "get", APIPrefix: "api",
			APIVersion: "v1", Namespace: "ns", Resource: "namespaces", Name: "ns", Parts: []string{"namespaces", "ns"}}},
		{"PATCH", "/apis/example.com/v1/widgets/w/status", RequestInfo{IsResourceRequest: true, Path: "/apis/example.com/v1/widgets/w/status",
			Verb: "patch", APIPrefix: "apis", APIGroup: "example.com", APIVersion: "v1", Resource: "widgets", Name: "w", Subresource: "status",
			Parts: []string{"widgets", "w", "status"}}},
		{"POST", "/api/v1/namespaces", RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces", Verb: "create", APIPrefix: "api",
			APIVersion: "v1", Resource: "namespaces", Parts: []string{"namespaces"}}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			got := NewRequestInfo(httptest.NewRequest(tt.method, tt.url, nil))
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func BenchmarkNewRequestInfo(b *testing.B) {
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/app", nil)
	b.ReportAllocs()
	for b.Loop() {
		NewRequestInfo(r)
	}
}
