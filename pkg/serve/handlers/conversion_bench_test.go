package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkConversionNone measures GET and LIST of a two-version CRD with strategy None through a
// whole server, over HTTP: at the stored version (the stored bytes go out as they are) and at the
// other version (each object decoded, converted and encoded again). 1,000 objects are stored at v1.
func BenchmarkConversionNone(b *testing.B) {
	const objects = 1000
	manifest, err := json.Marshal(gizmoCRD(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}))
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "gizmos.json")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		b.Fatal(err)
	}
	srv := servertest.Start(b, "--api-config", file)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	do := func(method, path, body string) (int, int) {
		req, err := http.NewRequest(method, srv.InsecureURL+path, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, int(n)
	}
	var wg sync.WaitGroup
	names := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				spec := fmt.Sprintf(`{"size":%d}`, i)
				if code, _ := do("POST", gizmosV1, gizmo("v1", fmt.Sprintf("g%04d", i), spec)); code != 201 {
					b.Errorf("create %d: %d", i, code)
				}
			}
		}()
	}
	for i := range objects {
		names <- i
	}
	close(names)
	wg.Wait()
	for _, bc := range []struct{ name, path string }{
		{"get/stored-version", gizmosV1 + "/g0500"},
		{"get/other-version", gizmosV2 + "/g0500"},
		{"list/stored-version", gizmosV1},
		{"list/other-version", gizmosV2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			code, size := do("GET", bc.path, "")
			if code != 200 {
				b.Fatalf("GET %s: %d", bc.path, code)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do("GET", bc.path, "")
			}
		})
	}
}
