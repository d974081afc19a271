package serve

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/routes/openapi"
	"github.com/apictl/apictl/pkg/serve/status"
)

// openAPIDocs builds the OpenAPI documents on first use: with many CRDs they take longer to build
// than the rest of start-up, and only kubectl's validation, explain and apply ask for them. Each API
// state has its own; a v3 document whose routes and schemas did not change since the last state whose
// documents were built is reused as it was, so that a CRD coming or going rebuilds its own group
// version's document and v2, not every group's.
type openAPIDocs struct {
	build func() (*openAPIBytes, error)
	// built is set once build succeeded; prev, set once, is the last earlier state whose documents
	// were built, the only one a later state reuses from (so that at most one earlier state's
	// documents stay in memory).
	built atomic.Pointer[openAPIBytes]
	prev  *openAPIDocs
}

type openAPIBytes struct {
	v2     []byte
	v2ETag string
	// v2Proto is v2 as protobuf, which kubectl and helm ask for first; built on first use.
	v2Proto func() ([]byte, error)
	index   []byte
	v3      map[string][]byte
	v3Hash  map[string]string
	// v3Remote are the v3 keys that remote servers serve: their documents are proxied.
	v3Remote map[string]*RemoteGroupVersion
	// v3From is what each v3 document was built from, to tell whether a later state may reuse it.
	v3From map[string]v3Source
}

// v3Source is what one v3 document is built from: its routes, and the schemas of the custom
// resources they serve (held, so that pointer identity stays meaningful).
type v3Source struct {
	routes  []routes.Route
	schemas []*apiextensionsv1.JSONSchemaProps
}

func (a v3Source) equal(b v3Source) bool {
	return slices.EqualFunc(a.routes, b.routes, func(x, y routes.Route) bool { return reflect.DeepEqual(x, y) }) &&
		slices.Equal(a.schemas, b.schemas)
}

func newOpenAPIDocs(t routes.Table, api *routes.API, remote *remoteOpenAPI, version string, prev *openAPIDocs) *openAPIDocs {
	if prev != nil && prev.built.Load() == nil {
		prev = prev.prev
	}
	o := &openAPIDocs{prev: prev}
	o.build = sync.OnceValues(func() (*openAPIBytes, error) {
		out, err := buildOpenAPI(t, api, remote, version, o.prev)
		if err == nil {
			o.built.Store(out)
		}
		return out, err
	})
	return o
}

func buildOpenAPI(t routes.Table, api *routes.API, remote *remoteOpenAPI, version string, prev *openAPIDocs) (*openAPIBytes, error) {
	opts := openapi.Options{Version: version}
	v2, err := openapi.BuildV2(t, api, opts)
	if err != nil {
		return nil, fmt.Errorf("building OpenAPI v2: %w", err)
	}
	if err := remote.mergeV2(v2); err != nil {
		return nil, err
	}
	out := &openAPIBytes{v3: map[string][]byte{}, v3Hash: map[string]string{}, v3From: map[string]v3Source{}}
	if out.v2, err = json.Marshal(v2); err != nil {
		return nil, fmt.Errorf("encoding OpenAPI v2: %w", err)
	}
	out.v2ETag = fmt.Sprintf("%q", fmt.Sprintf("%X", sha512.Sum512(out.v2)))
	out.v2Proto = sync.OnceValues(func() ([]byte, error) { return v2ToProto(out.v2) })
	var before *openAPIBytes
	if prev != nil {
		before = prev.built.Load()
	}
	for key, src := range v3Sources(t, api) {
		if before != nil {
			if old, ok := before.v3From[key]; ok && old.equal(src) {
				out.v3[key], out.v3Hash[key], out.v3From[key] = before.v3[key], before.v3Hash[key], src
				continue
			}
		}
		docs, err := openapi.BuildV3(routes.Table{Routes: src.routes}, api, opts)
		if err != nil {
			return nil, fmt.Errorf("building OpenAPI v3: %w", err)
		}
		for k, doc := range docs {
			b, err := json.Marshal(doc)
			if err != nil {
				return nil, fmt.Errorf("encoding OpenAPI v3 %s: %w", k, err)
			}
			out.v3[k] = b
			out.v3Hash[k] = fmt.Sprintf("%X", sha512.Sum512(b))
			out.v3From[k] = src
		}
	}
	index := openapi.NewV3Index(out.v3)
	if remote != nil {
		out.v3Remote = remote.v3
		for key, r := range remote.v3 {
			if _, local := out.v3[key]; !local {
				index.Paths[key] = openapi.V3IndexEntry{ServerRelativeURL: r.OpenAPIV3URL}
			}
		}
	}
	if out.index, err = json.Marshal(index); err != nil {
		return nil, fmt.Errorf("encoding the OpenAPI v3 index: %w", err)
	}
	return out, nil
}

// v3Sources splits the table by v3 document.
func v3Sources(t routes.Table, api *routes.API) map[string]v3Source {
	out := map[string]v3Source{}
	for i := range t.Routes {
		r := &t.Routes[i]
		key, ok := openapi.DocumentKey(r)
		if !ok || r.OperationID == "" {
			continue
		}
		src := out[key]
		src.routes = append(src.routes, *r)
		if r.Resource != "" && r.Subresource == "" {
			if res, ok := api.Resource(r.Group, r.Version, r.Resource); ok && res.Schema != nil && !slices.Contains(src.schemas, res.Schema) {
				src.schemas = append(src.schemas, res.Schema)
			}
		}
		out[key] = src
	}
	return out
}

func (o *openAPIDocs) get(w http.ResponseWriter, r *http.Request) (*openAPIBytes, bool) {
	docs, err := o.build()
	if err != nil {
		status.WriteError(w, r, err)
		return nil, false
	}
	return docs, true
}

// v2ToProto encodes OpenAPI v2 as gnostic's protobuf document, as kube-openapi does.
func v2ToProto(v2 []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(v2)
	if err != nil {
		return nil, fmt.Errorf("reading OpenAPI v2 for protobuf: %w", err)
	}
	return proto.Marshal(doc)
}

// openAPIV2Formats are what /openapi/v2 serves, in kube-openapi's order, with the media type each
// answers with (the @ spelling is an older name of the protobuf type).
var openAPIV2Formats = []struct {
	subType, contentType string
	proto                bool
}{
	{"json", "application/json", false},
	{"com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", true},
	{"com.github.proto-openapi.spec.v2.v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", true},
}

// serveV2 serves OpenAPI v2 as JSON or protobuf, negotiated as kube-openapi does: the Accept clauses
// by quality, the first format a clause matches, and a bare 406 when none does.
func (o *openAPIDocs) serveV2(w http.ResponseWriter, r *http.Request, _ *routes.Match) {
	docs, ok := o.get(w, r)
	if !ok {
		return
	}
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	w.Header().Add("Vary", "Accept")
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, f := range openAPIV2Formats {
			if (clause.Type != "application" && clause.Type != "*") || (clause.SubType != f.subType && clause.SubType != "*") {
				continue
			}
			body := docs.v2
			if f.proto {
				var err error
				if body, err = docs.v2Proto(); err != nil {
					status.WriteError(w, r, err)
					return
				}
			}
			serveCached(w, r, f.contentType, body, docs.v2ETag, false)
			return
		}
	}
	w.WriteHeader(http.StatusNotAcceptable)
}

// serveV3 serves the index at /openapi/v3 and a document at /openapi/v3/<key>. A request whose ?hash=
// is current is cached for good; an outdated hash is redirected to the current one, as kube does.
func (o *openAPIDocs) serveV3(w http.ResponseWriter, r *http.Request, m *routes.Match) {
	docs, ok := o.get(w, r)
	if !ok {
		return
	}
	key := m.Params.Subpath
	if key == "" {
		serveCached(w, r, "application/json", docs.index, "", false)
		return
	}
	body, ok := docs.v3[key]
	if remote, isRemote := docs.v3Remote[key]; !ok && isRemote {
		remote.Handler.ServeHTTP(w, r)
		return
	}
	if !ok {
		w.WriteHeader(http.StatusNotFound) // kube-openapi's answer: no body
		return
	}
	hash := docs.v3Hash[key]
	if q := r.URL.Query().Get("hash"); q != "" && q != hash {
		http.Redirect(w, r, "/openapi/v3/"+key+"?hash="+hash, http.StatusMovedPermanently)
		return
	}
	serveCached(w, r, "application/json", body, fmt.Sprintf("%q", hash), r.URL.Query().Get("hash") != "")
}

func serveCached(w http.ResponseWriter, r *http.Request, contentType string, body []byte, etag string, immutable bool) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	if etag != "" {
		h.Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if immutable {
		h.Set("Cache-Control", "public, immutable")
	} else {
		h.Set("Cache-Control", "no-cache, private")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
