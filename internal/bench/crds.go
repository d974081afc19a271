package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// crdManifest is one CRD of the installed set: a small schema and a status subresource, ten CRDs per
// group, as operators ship them.
func crdManifest(i int) []byte {
	group := fmt.Sprintf("group-%d.bench.example.com", i/10)
	return fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"things%[1]d.%[2]s"},
"spec":{"group":%[2]q,"scope":"Namespaced",
 "names":{"plural":"things%[1]d","singular":"thing%[1]d","kind":"Thing%[1]d","listKind":"Thing%[1]dList"},
 "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
  "schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"size":{"type":"integer"},"name":{"type":"string"}}},
   "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}}`, i, group)
}

// installCRDs creates n CRDs and waits until the server reports every one Established.
func installCRDs(ctx context.Context, h httpTarget, n int) error {
	err := parallel(ctx, n, seedConcurrency, func(ctx context.Context, i int) error {
		return h.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crdManifest(i), http.StatusCreated, nil)
	})
	if err != nil {
		return fmt.Errorf("creating CRDs: %w", err)
	}
	return waitEstablished(ctx, h, n)
}

// waitEstablished waits until the server reports at least n CRDs Established.
func waitEstablished(ctx context.Context, h httpTarget, n int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		var buf bytes.Buffer
		if err := h.do(ctx, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, http.StatusOK, &buf); err != nil {
			return fmt.Errorf("listing CRDs: %w", err)
		}
		var list struct {
			Items []struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			} `json:"items"`
		}
		if err := json.Unmarshal(buf.Bytes(), &list); err != nil {
			return fmt.Errorf("reading the CRD list: %w", err)
		}
		established := 0
		for _, c := range list.Items {
			for _, cond := range c.Status.Conditions {
				if cond.Type == "Established" && cond.Status == "True" {
					established++
				}
			}
		}
		if established >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d CRDs Established: %w", established, n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
