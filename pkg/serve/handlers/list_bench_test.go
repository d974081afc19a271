package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/apictl/apictl/pkg/serve/servertest"
)

// BenchmarkListConfigMaps measures a LIST of 1,000 ConfigMaps through a whole server over HTTP: as
// JSON (the fast path: stored bytes spliced, nothing decoded) and as PartialObjectMetadataList (each
// object's metadata decoded and encoded).
func BenchmarkListConfigMaps(b *testing.B) {
	const objects = 1000
	srv := servertest.Start(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	do := func(method, path, body, accept string) (int, int) {
		req, err := http.NewRequest(method, srv.InsecureURL+path, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
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
				body := fmt.Sprintf(`{"metadata":{"name":"cm%04d","labels":{"app":"bench"}},"data":{"key":"%0200d"}}`, i, i)
				if code, _ := do("POST", cmPath, body, ""); code != 201 {
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
	for _, bc := range []struct{ name, accept string }{
		{"json", ""},
		{"partial-metadata", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			code, size := do("GET", cmPath, "", bc.accept)
			if code != 200 {
				b.Skipf("LIST answered %d", code)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do("GET", cmPath, "", bc.accept)
			}
		})
	}
}
