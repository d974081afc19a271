package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/pkg/registry/crschema"
	"github.com/apictl/apictl/pkg/serve/store"
)

// readBody reads the request body as JSON, converting YAML; protobuf bodies are returned as they are
// with formatProtobuf. The body limit is enforced by the chain's filter; reading past it fails with
// *http.MaxBytesError, which apiError turns into 413.
func readBody(r *http.Request) ([]byte, outputFormat, error) {
	format, err := inputFormat(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, 0, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, 0, err
		}
		return nil, 0, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if format == formatYAML {
		js, err := yaml.YAMLToJSONStrict(body)
		if err != nil {
			return nil, 0, apierrors.NewBadRequest(fmt.Sprintf("error converting YAML to JSON: %v", err))
		}
		return js, formatJSON, nil
	}
	return body, format, nil
}

// typeMeta is what the body says it is.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// decodeObject decodes body into a new object of the scope's kind. Unknown and duplicate fields are
// handled per fieldValidation: Strict fails with kube's 400, Warn returns them as warnings, Ignore
// drops them. A built-in kind's apiVersion and kind default to the route's, as kube's decoder does with
// the endpoint's kind as the default (the Python and JavaScript clients leave both out unless the
// caller sets them); a custom resource must name its kind, with kube's message when it does not.
func (s *scope) decodeObject(body []byte, format outputFormat, validation string) (runtime.Object, []string, error) {
	if format == formatProtobuf {
		obj := s.newObject()
		if err := s.api.protobuf.decode(body, obj, s); err != nil {
			return nil, nil, err
		}
		s.setDefaults(obj)
		return obj, nil, nil
	}
	return s.shape.decodeJSON(s, body, validation)
}

// decodeTyped decodes a JSON body into a new object of the scope's kind, its Go type's or an
// Unstructured without a schema.
func (s *scope) decodeTyped(body []byte, validation string) (runtime.Object, []string, error) {
	var tm typeMeta
	if err := json.Unmarshal(body, &tm); err != nil {
		return nil, nil, crschema.Unrecognized(s.ObjectGVK.Kind, fmt.Errorf("couldn't get version/kind; json parse error: %w", err), body)
	}
	if err := s.checkTypeMeta(tm); err != nil {
		return nil, nil, err
	}
	obj := s.newObject()
	var strict []error
	var err error
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := map[string]any{}
		strict, err = sigsjson.UnmarshalStrict(body, &content, sigsjson.DisallowDuplicateFields)
		u.Object = content
	} else {
		strict, err = sigsjson.UnmarshalStrict(body, obj)
	}
	if err != nil {
		return nil, nil, s.cannotHandle(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(s.ObjectGVK)
	s.setDefaults(obj)
	warnings, err := s.strictErrors(strict, validation)
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// setDefaults applies the kind's decoding defaults to a decoded object of the resource's kind (the
// resource itself or its status), as kube's decoder does; a Scale is another kind.
func (s *scope) setDefaults(obj runtime.Object) {
	if s.Strategy != nil && s.ObjectGVK == s.Strategy.GVK {
		s.Strategy.Default(obj)
	}
}

// checkTypeMeta requires the body's apiVersion and kind, where given, to be the route's, with the
// messages of kube's decoder and create handler. What the body leaves out is the route's, as kube's
// serializer defaults it.
func (s *scope) checkTypeMeta(tm typeMeta) error {
	want := s.ObjectGVK
	if tm.APIVersion == "" {
		tm.APIVersion = want.GroupVersion().String()
	}
	if tm.Kind == "" {
		tm.Kind = want.Kind
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return crschema.Unrecognized(want.Kind, err, nil)
	}
	got := gv.WithKind(tm.Kind)
	switch {
	case got == want:
		return nil
	case got.GroupKind() == want.GroupKind() && kubescheme.Scheme.Recognizes(got):
		// Another version of the kind decodes, and the create handler refuses it.
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)",
			tm.APIVersion, want.GroupVersion()))
	case !kubescheme.Scheme.Recognizes(got):
		return s.cannotHandleKind(got, fmt.Errorf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", got.Kind, gv))
	default:
		// kube decodes into its internal types, named by group: core.ConfigMap, rbac.Role.
		return s.cannotHandleKind(got, fmt.Errorf("converting (%s.%s) to (%s.%s): unknown conversion",
			got.Version, got.Kind, internalPackage(want.Group), want.Kind))
	}
}

// internalPackage is the Go package of kube's internal types of a group, which its conversion errors
// name.
func internalPackage(group string) string {
	if group == "" {
		return "core"
	}
	name, _, _ := strings.Cut(group, ".")
	return name
}

// cannotHandleKind is kube's 400 for a body of another kind than the route's.
func (s *scope) cannotHandleKind(got schema.GroupVersionKind, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", got.Kind, got.Version, s.ObjectGVK.Kind, err))
}

// cannotHandle is kube's 400 for a body that does not decode into the kind.
func (s *scope) cannotHandle(err error) error {
	gvk := s.ObjectGVK
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
}

// strictErrors applies fieldValidation to unknown and duplicate fields.
func (s *scope) strictErrors(strict []error, validation string) ([]string, error) {
	if len(strict) == 0 || validation == validationIgnore {
		return nil, nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		msgs[i] = e.Error()
	}
	if validation == validationStrict {
		return nil, s.cannotHandle(fmt.Errorf("strict decoding error: %s", strings.Join(msgs, ", ")))
	}
	return msgs, nil
}

// addWarnings sends each message as a Warning header, the way kube reports warnings (kubectl prints
// them as "Warning: ...").
func addWarnings(w http.ResponseWriter, msgs []string) {
	for _, m := range msgs {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", m))
	}
}

// write is what every create and update reads before anything else: the response's format, the
// options, and the body.
type write struct {
	out        output
	opts       *store.WriteOptions
	body       []byte
	bodyFormat outputFormat
}

// readWrite reads a write request; on a problem it answers with the error and returns false.
// optionsKind names the options in errors: CreateOptions or UpdateOptions.
func (s *scope) readWrite(w http.ResponseWriter, r *http.Request, optionsKind, name string) (*write, bool) {
	out, err := negotiateOutput(r.Header.Get("Accept"), 0)
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	opts, err := parseWriteOptions(r.URL.Query(), optionsKind)
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	opts.UserAgent = r.UserAgent()
	body, format, err := readBody(r)
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, name))
		return nil, false
	}
	return &write{out: out, opts: opts, body: body, bodyFormat: format}, true
}
