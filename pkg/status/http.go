package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Path is where a server serves its Report, on the secure port behind authorization: a
// non-resource URL, which the bootstrap ClusterRole system:apictl:status-reader grants.
const Path = "/apictl/v1/status"

// gatherTimeout bounds one request's gathering: each section answers within it or reports why not.
const gatherTimeout = 5 * time.Second

// ServeHTTP answers GET Path with the Report as JSON.
func (g *Gatherer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), gatherTimeout)
	defer cancel()
	body, err := json.MarshalIndent(g.Gather(ctx), "", "  ")
	if err != nil {
		http.Error(w, fmt.Sprintf("encoding the status: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// Fetch asks the server cfg points at for its Report. A refusal is the server's own message, such
// as kube's 403 for a user without system:apictl:status-reader.
func Fetch(ctx context.Context, cfg *rest.Config) (*Report, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a client of %s: %w", cfg.Host, err)
	}
	url := strings.TrimSuffix(cfg.Host, "/") + Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return nil, fmt.Errorf("asking %s: %d %s: %w", url, resp.StatusCode, http.StatusText(resp.StatusCode), errors.New(st.Message))
		}
		return nil, fmt.Errorf("asking %s: %d %s: %s", url, resp.StatusCode, http.StatusText(resp.StatusCode), strings.TrimSpace(string(body)))
	}
	var r Report
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("reading %s: not a status report: %w", url, err)
	}
	return &r, nil
}
