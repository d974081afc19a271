package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkCRDs is issue 12's measurement: N CRDs (APICTL_BENCH_CRDS, default 1000) created through
// the API by 8 clients, the time from each create to Established as a watch sees it (p50, p99), the
// memory they take, discovery and OpenAPI with them installed (ETag hit and miss), and a built-in
// resource's GET, LIST and CREATE before and after. Run it alone:
//
//	go test ./pkg/apiserver -run '^$' -bench BenchmarkCRDs -benchtime 2000x
func BenchmarkCRDs(b *testing.B) {
	n := 1000
	if v := os.Getenv("APICTL_BENCH_CRDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("APICTL_BENCH_CRDS=%q: want a positive number", v)
		}
	}
	s := servertest.Start(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for i := range 10 {
		post(b, client, s.InsecureURL+"/api/v1/namespaces/default/configmaps", fmt.Sprintf(`{"metadata":{"name":"seed-%d"},"data":{"k":"v"}}`, i))
	}
	builtin := func(phase string) {
		b.Run("configmap-GET/"+phase, func(b *testing.B) {
			for range b.N {
				get(b, client, s.InsecureURL+"/api/v1/namespaces/default/configmaps/seed-0", "", http.StatusOK)
			}
		})
		b.Run("configmap-LIST-10/"+phase, func(b *testing.B) {
			for range b.N {
				get(b, client, s.InsecureURL+"/api/v1/namespaces/default/configmaps", "", http.StatusOK)
			}
		})
		b.Run("configmap-CREATE/"+phase, func(b *testing.B) {
			for i := range b.N {
				post(b, client, s.InsecureURL+"/api/v1/namespaces/default/configmaps", fmt.Sprintf(`{"metadata":{"name":"%s-%d-%d"}}`, phase, i, time.Now().UnixNano()))
			}
		})
	}
	builtin("0-crds")

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rssBefore := vmRSS(b)
	latencies := installCRDs(b, s, n)
	slices.Sort(latencies)
	b.Run(fmt.Sprintf("install-%d-crds", n), func(b *testing.B) {
		// Measured once above; reported here so that the numbers print with the others.
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1000, "max-ms")
	})
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("%d CRDs: heap in use +%d KiB per CRD, VmRSS +%d KiB per CRD (server and client in one process)",
		n, (int64(after.HeapInuse)-int64(before.HeapInuse))/1024/int64(n), (vmRSS(b)-rssBefore)/int64(n))

	aggregated := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, d := range []struct{ name, path, accept string }{
		{"discovery-aggregated", "/apis", aggregated},
		{"discovery-group-version", "/apis/group-0.bench.example.com/v1", "application/json"},
		{"openapi-v2", "/openapi/v2", "application/json"},
		{"openapi-v3-group-version", "/openapi/v3/apis/group-0.bench.example.com/v1", "application/json"},
	} {
		etag := header(b, client, s.InsecureURL+d.path, d.accept, "ETag")
		b.Run(d.name+"/etag-miss", func(b *testing.B) {
			for range b.N {
				get(b, client, s.InsecureURL+d.path, d.accept, http.StatusOK)
			}
		})
		if etag == "" {
			continue
		}
		b.Run(d.name+"/etag-hit", func(b *testing.B) {
			for range b.N {
				getIfNoneMatch(b, client, s.InsecureURL+d.path, d.accept, etag)
			}
		})
	}
	builtin(fmt.Sprintf("%d-crds", n))
}

// installCRDs creates n CRDs with 8 clients and returns, for each, the time from the start of its
// create to the watch event that shows it Established.
func installCRDs(b *testing.B, s *servertest.Server, n int) []time.Duration {
	cfg := *s.AdminConfig
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: the server is measured
	cs := apiextensionsclient.NewForConfigOrDie(&cfg).ApiextensionsV1().CustomResourceDefinitions()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := cs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	started := map[string]time.Time{}
	established := map[string]time.Time{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					mu.Lock()
					if _, seen := established[crd.Name]; !seen {
						established[crd.Name] = time.Now()
					}
					all := len(established) == n
					mu.Unlock()
					if all {
						return
					}
				}
			}
		}
	}()
	var createTimes []time.Duration
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				crd := benchCRD(i)
				mu.Lock()
				started[crd.Name] = time.Now()
				mu.Unlock()
				t0 := time.Now()
				if _, err := cs.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
				mu.Lock()
				createTimes = append(createTimes, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case <-done:
	case <-ctx.Done():
		b.Fatalf("not every CRD was Established: %v", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(createTimes)
	b.Logf("create requests: p50 %v, p99 %v", createTimes[len(createTimes)/2], createTimes[len(createTimes)*99/100])
	out := make([]time.Duration, 0, n)
	for name, t := range established {
		out = append(out, t.Sub(started[name]))
	}
	return out
}

// benchCRD is a CRD with a small schema, in a group of its own per ten CRDs, as operators ship them.
func benchCRD(i int) *apiextensionsv1.CustomResourceDefinition {
	group := fmt.Sprintf("group-%d.bench.example.com", i/10)
	plural := fmt.Sprintf("things%d", i)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: fmt.Sprintf("thing%d", i),
				Kind: fmt.Sprintf("Thing%d", i), ListKind: fmt.Sprintf("Thing%dList", i)},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer"}, "name": {Type: "string"}, "tags": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "boolean"}}},
					}}}}},
		},
	}
}

func get(b *testing.B, c *http.Client, url, accept string, want int) {
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	do(b, c, req, want)
}

func getIfNoneMatch(b *testing.B, c *http.Client, url, accept, etag string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", accept)
	req.Header.Set("If-None-Match", etag)
	do(b, c, req, http.StatusNotModified)
}

func post(b *testing.B, c *http.Client, url, body string) {
	req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	do(b, c, req, http.StatusCreated)
}

func header(b *testing.B, c *http.Client, url, accept, name string) string {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", accept)
	return do(b, c, req, http.StatusOK).Get(name)
}

func do(b *testing.B, c *http.Client, req *http.Request, want int) http.Header {
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d, want %d", req.Method, req.URL, resp.StatusCode, want)
	}
	return resp.Header
}

// vmRSS is the process's resident memory in KiB.
func vmRSS(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
