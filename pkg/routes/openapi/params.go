package openapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/routes"
)

// queryParam is one query parameter, derived from a field of metav1's option types as kube's
// installer derives them: the json name, the SwaggerDoc description, the field's type.
type queryParam struct {
	name, description string
	typ, format       string
	// unique marks []string parameters (dryRun), which kube publishes as a string with uniqueItems.
	unique bool
}

// prettyParam is on every resource route except CONNECT.
var prettyParam = queryParam{
	name:        "pretty",
	description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
	typ:         "string",
}

// optionParams lists the query parameters of an options type, skipping TypeMeta and struct fields
// (DeleteOptions.preconditions travels only in the body).
func optionParams(t reflect.Type) []queryParam {
	fieldDocs := docs(t)
	var out []queryParam
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		p := queryParam{name: name, description: fieldDocs[name]}
		switch ft.Kind() {
		case reflect.String:
			p.typ = "string"
		case reflect.Bool:
			p.typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			p.typ = "integer"
		case reflect.Slice:
			if ft.Elem().Kind() != reflect.String {
				continue
			}
			p.typ, p.unique = "string", true
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// actionParams are the query parameters of an action, sorted by name: list options on lists and
// watches, list and delete options on collection deletes, the create, update, patch or delete
// options on writes (dryRun, fieldManager, fieldValidation, ...), none on reads.
func actionParams(a routes.Action) []queryParam {
	var ps []queryParam
	switch a {
	case routes.ActionList, routes.ActionWatch, routes.ActionWatchList:
		ps = optionParams(reflect.TypeFor[metav1.ListOptions]())
	case routes.ActionDeleteCollection:
		ps = append(optionParams(reflect.TypeFor[metav1.ListOptions]()), optionParams(reflect.TypeFor[metav1.DeleteOptions]())...)
	case routes.ActionPost:
		ps = optionParams(reflect.TypeFor[metav1.CreateOptions]())
	case routes.ActionPut:
		ps = optionParams(reflect.TypeFor[metav1.UpdateOptions]())
	case routes.ActionPatch:
		ps = optionParams(reflect.TypeFor[metav1.PatchOptions]())
	case routes.ActionDelete:
		ps = optionParams(reflect.TypeFor[metav1.DeleteOptions]())
	}
	slices.SortFunc(ps, func(a, b queryParam) int { return strings.Compare(a.name, b.name) })
	return slices.CompactFunc(ps, func(a, b queryParam) bool { return a.name == b.name })
}

// pathParamDoc describes {namespace}, {name} and {path:*} as kube does.
func pathParamDoc(name, kind string) string {
	switch name {
	case "namespace":
		return "object name and auth scope, such as for teams and projects"
	case "name":
		return "name of the " + kind
	}
	return "path to the resource"
}

// pathParams lists the parameters in a route path, in order: namespace, name, path.
func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name, _, _ := strings.Cut(strings.Trim(seg, "{}"), ":")
			out = append(out, name)
		}
	}
	return out
}
