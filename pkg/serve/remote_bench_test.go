package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apictl/apictl/pkg/routes"
)

// BenchmarkAggregatorOnLocalRequest measures what the aggregator's check costs a local request (a GET
// of a configmap through the mux): none without remote group versions, one path split and map lookup
// with them.
func BenchmarkAggregatorOnLocalRequest(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(fmt.Sprintf("remote=%d", n), func(b *testing.B) {
			cfg := Config{InsecureServing: &InsecureServingInfo{Address: "127.0.0.1:0"}, API: routes.Builtin(), Resources: fakeResources{}}
			s, err := cfg.Complete().New()
			if err != nil {
				b.Fatal(err)
			}
			if n > 0 {
				remote := &Remote{}
				for i := range n {
					remote.GroupVersions = append(remote.GroupVersions, RemoteGroupVersion{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1",
						Priority: Priority{Group: 1000, Version: 15}, Handler: http.NotFoundHandler()})
				}
				if err := s.SetRemote(remote); err != nil {
					b.Fatal(err)
				}
			}
			req := httptest.NewRequest(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/default/leases/x", nil)
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s.mux.ServeHTTP(w, req)
			}
		})
	}
}

type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkRemoteLookup is the aggregator's check alone, for a local path below /apis with ten
// remote group versions: what it adds to a local request, without the mux's noise around it.
func BenchmarkRemoteLookup(b *testing.B) {
	remote := &Remote{}
	for i := range 10 {
		remote.GroupVersions = append(remote.GroupVersions, RemoteGroupVersion{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1",
			Handler: http.NotFoundHandler()})
	}
	rs, err := mergeRemote(routes.NewDiscovery(routes.Builtin(), routes.DiscoveryOptions{}), remote)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rs.handler("/apis/coordination.k8s.io/v1/namespaces/default/leases/x") != nil {
			b.Fatal("a local path went to the proxy")
		}
	}
}
