package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkListConfigMaps measures a LIST of 1,000 ConfigMaps through a whole server over HTTP: as
// JSON (the fast path: stored bytes spliced, nothing decoded), as the same compressed with gzip (the
// client reads the compressed bytes; SetBytes counts them), indented, as YAML and as a Table (each
// object decoded and made a row), and as PartialObjectMetadataList (each object's metadata decoded
// and encoded).
func BenchmarkListConfigMaps(b *testing.B) {
	const objects = 1000
	srv := servertest.Start(b)
	// Compression asked for explicitly or not at all: Go's transport would otherwise ask for gzip on
	// every request and decompress in the client, timing both ends of it.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}}
	do := func(query, accept, encoding string) (int, int) {
		req, err := http.NewRequest("GET", srv.InsecureURL+cmPath+query, nil)
		if err != nil {
			b.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, int(n)
	}
	createConfigMaps(b, srv.InsecureURL, objects)
	for _, bc := range []struct{ name, query, accept, encoding string }{
		{"json", "", "", ""},
		{"json-gzip", "", "", "gzip"},
		{"json-pretty", "?pretty=true", "", ""},
		{"yaml", "", "application/yaml", ""},
		{"table", "", "application/json;as=Table;g=meta.k8s.io;v=v1", ""},
		{"partial-metadata", "", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			code, size := do(bc.query, bc.accept, bc.encoding)
			if code != 200 {
				b.Skipf("LIST answered %d", code)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do(bc.query, bc.accept, bc.encoding)
			}
		})
	}
}

// createConfigMaps creates n ConfigMaps of about 500 bytes in the default namespace, eight at a time.
func createConfigMaps(tb testing.TB, base string, n int) {
	tb.Helper()
	var wg sync.WaitGroup
	names := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				body := fmt.Sprintf(`{"metadata":{"name":"cm%04d","labels":{"app":"bench"}},"data":{"key":"%0200d"}}`, i, i)
				resp, err := http.Post(base+cmPath, "application/json", strings.NewReader(body))
				if err != nil {
					tb.Errorf("create %d: %v", i, err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					tb.Errorf("create %d: %d", i, resp.StatusCode)
				}
			}
		}()
	}
	for i := range n {
		names <- i
	}
	close(names)
	wg.Wait()
}
