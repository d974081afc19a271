package openapi

import (
	"net/http"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apictl/apictl/pkg/routes"
)

// BuildV2 builds the /openapi/v2 document of the routes in t, whose resources api describes.
func BuildV2(t routes.Table, api *routes.API, opts Options) (*spec.Swagger, error) {
	d, err := newDefinitions(false)
	if err != nil {
		return nil, err
	}
	b := &builder{api: api, defs: d}
	paths := map[string]spec.PathItem{}
	for i := range t.Routes {
		r := &t.Routes[i]
		if !inOpenAPI(r) || r.OperationID == "" {
			continue
		}
		op, err := b.plan(r)
		if err != nil {
			return nil, err
		}
		key := openAPIPath(r)
		item := paths[key]
		if item.Parameters == nil {
			item.Parameters = v2PathParams(r)
		}
		if slot := operationSlot(r.Method, &item.Get, &item.Put, &item.Post, &item.Delete, &item.Patch, &item.Head, &item.Options); slot != nil {
			*slot = v2Operation(op)
		}
		paths[key] = item
	}
	defs := spec.Definitions{}
	for name, s := range b.defs.finish() {
		defs[name] = *s
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        opts.info(),
		Paths:       &spec.Paths{Paths: paths},
		Definitions: defs,
		SecurityDefinitions: spec.SecurityDefinitions{securityName: &spec.SecurityScheme{SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
		}}},
		Security: []map[string][]string{{securityName: {}}},
	}}, nil
}

// v2PathParams are the parameters every operation of the route's path shares: its path
// parameters and, on resource paths other than connect ones, pretty.
func v2PathParams(r *routes.Route) []spec.Parameter {
	var out []spec.Parameter
	for _, name := range pathParams(r.Path) {
		out = append(out, spec.Parameter{
			ParamProps:   spec.ParamProps{Name: name, In: "path", Required: true, Description: pathParamDoc(name, r.ObjectKind.Kind)},
			SimpleSchema: spec.SimpleSchema{Type: "string"},
		})
	}
	if r.IsResource() && r.Action != routes.ActionConnect {
		out = append(out, v2QueryParam(prettyParam))
	}
	if out == nil {
		out = []spec.Parameter{}
	}
	return out
}

func v2QueryParam(p queryParam) spec.Parameter {
	return spec.Parameter{
		ParamProps:        spec.ParamProps{Name: p.name, In: "query", Description: p.description},
		SimpleSchema:      spec.SimpleSchema{Type: p.typ, Format: p.format},
		CommonValidations: spec.CommonValidations{UniqueItems: p.unique},
	}
}

func v2Operation(op operation) *spec.Operation {
	r := op.route
	o := &spec.Operation{OperationProps: spec.OperationProps{
		Description: r.Doc,
		Consumes:    r.Consumes,
		Produces:    r.Produces,
		Schemes:     []string{"https"},
		Tags:        []string{r.Tag},
		ID:          r.OperationID,
		Responses:   &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{}}},
	}}
	if op.body != nil {
		o.Parameters = append(o.Parameters, spec.Parameter{ParamProps: spec.ParamProps{Name: "body", In: "body", Required: op.bodyReq, Schema: op.body}})
	}
	for _, p := range op.params {
		o.Parameters = append(o.Parameters, v2QueryParam(p))
	}
	for _, resp := range op.responses {
		o.Responses.StatusCodeResponses[resp.code] = spec.Response{ResponseProps: spec.ResponseProps{Description: resp.description, Schema: resp.schema}}
	}
	o.Responses.StatusCodeResponses[http.StatusUnauthorized] = spec.Response{ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}
	if r.IsResource() {
		o.AddExtension(extAction, strings.ToLower(string(r.Action)))
		o.AddExtension(extGVK, gvkExtension(r.ObjectKind))
	}
	return o
}
