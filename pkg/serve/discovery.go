package serve

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/apictl/apictl/pkg/routes"
)

// discoveryHandler serves the discovery documents, marshalled once at start-up.
type discoveryHandler struct {
	legacy     map[string][]byte // by path
	aggregated map[string]aggregatedDoc
}

type aggregatedDoc struct {
	body []byte
	etag string
}

func newDiscoveryHandler(d *routes.Discovery) (*discoveryHandler, error) {
	h := &discoveryHandler{legacy: map[string][]byte{}, aggregated: map[string]aggregatedDoc{}}
	add := func(path string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding discovery document %s: %w", path, err)
		}
		h.legacy[path] = b
		return nil
	}
	if d.APIVersions != nil {
		if err := add("/api", d.APIVersions); err != nil {
			return nil, err
		}
	}
	if err := add("/apis", &d.GroupList); err != nil {
		return nil, err
	}
	for name, g := range d.Groups {
		if err := add("/apis/"+name, g); err != nil {
			return nil, err
		}
	}
	for gv, list := range d.ResourceLists {
		if err := add(routes.GroupVersionPath(gv.Group, gv.Version), list); err != nil {
			return nil, err
		}
	}
	for path, list := range map[string]any{"/api": &d.AggregatedCore, "/apis": &d.AggregatedGroups} {
		b, err := json.Marshal(list)
		if err != nil {
			return nil, fmt.Errorf("encoding aggregated discovery %s: %w", path, err)
		}
		h.aggregated[path] = aggregatedDoc{body: b, etag: fmt.Sprintf("%q", fmt.Sprintf("%X", sha256.Sum256(b)))}
	}
	return h, nil
}

// serve answers a discovery path. /api and /apis answer with aggregated discovery (apidiscovery.k8s.io/v2)
// when the client accepts it: client-go decides by the response's Content-Type, so a legacy body never
// carries the aggregated type's parameters.
func (h *discoveryHandler) serve(w http.ResponseWriter, r *http.Request, m *routes.Match) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if doc, ok := h.aggregated[path]; ok && acceptsAggregated(r.Header.Get("Accept")) {
		w.Header().Set("Vary", "Accept")
		w.Header().Set("ETag", doc.etag)
		w.Header().Set("Content-Type", routes.MediaAggregatedDiscovery)
		if r.Header.Get("If-None-Match") == doc.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(doc.body)
		_, _ = w.Write(newline)
		return
	}
	body, ok := h.legacy[path]
	if !ok {
		NotFound(w, r)
		return
	}
	if _, aggregatable := h.aggregated[path]; aggregatable {
		w.Header().Set("Vary", "Accept")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	_, _ = w.Write(newline) // kube's encoder ends compact JSON with one
}

var newline = []byte{'\n'}

// acceptsAggregated reports whether an Accept header lists apidiscovery.k8s.io/v2's
// APIGroupDiscoveryList, whatever the order of the media type's parameters.
func acceptsAggregated(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || mt != "application/json" {
			continue
		}
		if params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList" {
			return true
		}
	}
	return false
}
