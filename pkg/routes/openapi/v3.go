package openapi

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/pkg/routes"
)

// BuildV3 builds the /openapi/v3/<key> documents of the routes in t, one per DocumentKey (api/v1,
// apis/<group>/<version>, and api, apis, apis/<group>, version for discovery), each holding only
// the schemas its operations refer to.
func BuildV3(t routes.Table, api *routes.API, opts Options) (map[string]*spec3.OpenAPI, error) {
	type doc struct {
		b     *builder
		paths map[string]*spec3.Path
	}
	docs := map[string]*doc{}
	for i := range t.Routes {
		r := &t.Routes[i]
		key, ok := DocumentKey(r)
		if !ok || r.OperationID == "" {
			continue
		}
		d := docs[key]
		if d == nil {
			defs, err := newDefinitions(true)
			if err != nil {
				return nil, err
			}
			d = &doc{b: &builder{api: api, defs: defs}, paths: map[string]*spec3.Path{}}
			docs[key] = d
		}
		op, err := d.b.plan(r)
		if err != nil {
			return nil, err
		}
		p := openAPIPath(r)
		item := d.paths[p]
		if item == nil {
			item = &spec3.Path{PathProps: spec3.PathProps{Parameters: v3PathParams(r)}}
			d.paths[p] = item
		}
		if slot := operationSlot(r.Method, &item.Get, &item.Put, &item.Post, &item.Delete, &item.Patch, &item.Head, &item.Options); slot != nil {
			*slot = v3Operation(op)
		}
	}
	out := make(map[string]*spec3.OpenAPI, len(docs))
	for key, d := range docs {
		out[key] = &spec3.OpenAPI{
			Version: "3.0.0",
			Info:    opts.info(),
			Paths:   &spec3.Paths{Paths: d.paths},
			Components: &spec3.Components{
				Schemas: d.b.defs.finish(),
				SecuritySchemes: spec3.SecuritySchemes{securityName: &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
					Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
				}}},
			},
			SecurityRequirement: []map[string][]string{{securityName: {}}},
		}
	}
	return out, nil
}

func v3PathParams(r *routes.Route) []*spec3.Parameter {
	var out []*spec3.Parameter
	for _, name := range pathParams(r.Path) {
		out = append(out, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
			Name: name, In: "path", Required: true, Description: pathParamDoc(name, r.ObjectKind.Kind),
			Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}},
		}})
	}
	if r.IsResource() && r.Action != routes.ActionConnect {
		out = append(out, v3QueryParam(prettyParam))
	}
	return out
}

func v3QueryParam(p queryParam) *spec3.Parameter {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{p.typ}, Format: p.format}}
	s.UniqueItems = p.unique
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{Name: p.name, In: "query", Description: p.description, Schema: s}}
}

func v3Operation(op operation) *spec3.Operation {
	r := op.route
	content := func(types []string, s *spec.Schema) map[string]*spec3.MediaType {
		m := make(map[string]*spec3.MediaType, len(types))
		for _, t := range types {
			m[t] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: s}}
		}
		return m
	}
	o := &spec3.Operation{OperationProps: spec3.OperationProps{
		Tags:        []string{r.Tag},
		Description: r.Doc,
		OperationId: r.OperationID,
		Responses:   &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{}}},
	}}
	for _, p := range op.params {
		o.Parameters = append(o.Parameters, v3QueryParam(p))
	}
	if op.body != nil {
		consumes := r.Consumes
		if len(consumes) == 0 {
			consumes = []string{routes.MediaAny}
		}
		o.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content(consumes, op.body), Required: op.bodyReq}}
	}
	for _, resp := range op.responses {
		o.Responses.StatusCodeResponses[resp.code] = &spec3.Response{ResponseProps: spec3.ResponseProps{Description: resp.description, Content: content(r.Produces, resp.schema)}}
	}
	o.Responses.StatusCodeResponses[http.StatusUnauthorized] = &spec3.Response{ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}
	if r.IsResource() {
		o.AddExtension(extAction, strings.ToLower(string(r.Action)))
		o.AddExtension(extGVK, gvkExtension(r.ObjectKind))
	}
	return o
}

// V3Index is the /openapi/v3 document: where each group version's document is, with a hash of its
// content so that clients (kubectl caches them) notice changes.
type V3Index struct {
	Paths map[string]V3IndexEntry `json:"paths"`
}

// V3IndexEntry points to one document.
type V3IndexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// NewV3Index indexes the marshalled documents by key, as kube does: /openapi/v3/<key>?hash=<upper
// hex sha512 of the document>.
func NewV3Index(docs map[string][]byte) V3Index {
	idx := V3Index{Paths: make(map[string]V3IndexEntry, len(docs))}
	for k, doc := range docs {
		idx.Paths[k] = V3IndexEntry{ServerRelativeURL: fmt.Sprintf("/openapi/v3/%s?hash=%X", k, sha512.Sum512(doc))}
	}
	return idx
}
