package handlers

import (
	"context"
	"net/http"
	"sync"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/warning"

	"github.com/apictl/apictl/pkg/admission"
	"github.com/apictl/apictl/pkg/serve/audit"
	"github.com/apictl/apictl/pkg/serve/request"
)

// Admission is the admission chain the writes go through (pkg/admission.Chain): mutating plugins
// before the object's own validation, validating plugins after it, as in kube.
type Admission interface {
	// Active reports whether any plugin may act; when not, the handlers skip admission entirely.
	Active() bool
	Admit(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error
	Validate(ctx context.Context, a kadmission.Attributes, o kadmission.ObjectInterfaces) error
}

// admissionBox holds the chain behind an atomic pointer.
type admissionBox struct{ Admission }

// SetAdmission installs the admission chain. The chain's plugins read the server through its
// in-process clients, which exist only once the handlers do: so it is set after New, before the
// server serves clients. Until then writes are not admitted.
func (a *API) SetAdmission(adm Admission) {
	if adm == nil {
		a.admission.Store(nil)
		return
	}
	a.admission.Store(&admissionBox{adm})
}

// activeAdmission returns the chain when some plugin may act on writes, else nil.
func (a *API) activeAdmission() Admission {
	b := a.admission.Load()
	if b == nil || !b.Active() {
		return nil
	}
	return b.Admission
}

// isWrite tells the actions admission sees.
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// withAdmissionWarnings gives a write a warning recorder, as kube's WithWarningRecorder filter does:
// the warnings of webhooks and policies, and those of the kinds' rules (recordWarnings), become
// Warning headers, on success and refusal alike.
func (a *API) withAdmissionWarnings(w http.ResponseWriter, r *http.Request) *http.Request {
	if !isWrite(r.Method) {
		return r
	}
	return r.WithContext(warning.WithWarningRecorder(r.Context(), &warningRecorder{w: w}))
}

// admissionRun is the admission of one write.
type admissionRun struct {
	chain Admission
	attrs *admission.Attributes
	objs  *admission.Objects
}

// startAdmission prepares the admission of a write, or returns nil when no plugin may act on it.
// name is what kube's attributes carry: empty for a create with generateName and for each object of
// a deletecollection.
func (s *store) startAdmission(ctx context.Context, op kadmission.Operation, obj, old runtime.Object, namespace, name string, options runtime.Object, dryRun bool) *admissionRun {
	chain := s.api.activeAdmission()
	if chain == nil {
		return nil
	}
	sub := ""
	if s.sub != nil {
		sub = s.sub.Name
	}
	return &admissionRun{
		chain: chain,
		attrs: admission.NewAttributes(admission.Request{
			Object: obj, OldObject: old, Kind: s.objectGVK, Resource: s.gvr, Subresource: sub,
			Namespace: namespace, Name: name, Operation: op, Options: options, DryRun: dryRun,
			User: kubeUser(ctx),
		}),
		objs: s.admissionObjects(),
	}
}

// mutate runs the mutating plugins; they change the object in place.
func (ar *admissionRun) mutate(ctx context.Context) error {
	if ar == nil {
		return nil
	}
	err := ar.chain.Admit(ctx, ar.attrs, ar.objs)
	audit.AddAnnotations(ctx, ar.attrs.GetAnnotations)
	return err
}

// validate runs the validating plugins on the object as it will be stored.
func (ar *admissionRun) validate(ctx context.Context) error {
	if ar == nil {
		return nil
	}
	err := ar.chain.Validate(ctx, ar.attrs, ar.objs)
	audit.AddAnnotations(ctx, ar.attrs.GetAnnotations)
	return err
}

// admit runs both phases, for deletes: there is no object of the kind's own validation between them.
func (ar *admissionRun) admit(ctx context.Context) error {
	if err := ar.mutate(ctx); err != nil {
		return err
	}
	return ar.validate(ctx)
}

// admissionObjects are how the plugins create, convert and default this scope's objects.
func (s *store) admissionObjects() *admission.Objects {
	o := &admission.Objects{Mapper: equivalents{s.api}, ConvertKind: s.kindConverter()}
	if s.conv != nil {
		conv := s.conv
		o.Convert = func(in *unstructured.Unstructured, to schema.GroupVersionKind) (*unstructured.Unstructured, error) {
			return conv.Convert(in, to.Version)
		}
	}
	switch {
	case s.crv != nil:
		crv, gvk := s.crv, s.objectGVK
		o.Default = func(obj runtime.Object) {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GroupVersionKind() == gvk {
				crv.Default(u)
			}
		}
	case s.strategy != nil && !s.isScale():
		o.Default = s.strategy.Default
	}
	return o
}

// kubeUser is the request's user as kube's admission attributes carry it.
func kubeUser(ctx context.Context) user.Info {
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return &user.DefaultInfo{}
	}
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// createOptions, updateOptions and deleteOptions are the operation options kube's attributes
// carry, in their external version with their kind set, as webhooks receive them.
func createOptions(o *writeOptions) runtime.Object {
	opts := &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"}, FieldManager: o.fieldManager, FieldValidation: o.fieldValidation}
	if o.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return opts
}

func updateOptions(o *writeOptions) runtime.Object {
	opts := &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"}, FieldManager: o.fieldManager, FieldValidation: o.fieldValidation}
	if o.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return opts
}

// patchUpdateOptions are the UpdateOptions kube admits a patch with (its patchToUpdateOptions).
func patchUpdateOptions(o metav1.PatchOptions) runtime.Object {
	return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"},
		DryRun: o.DryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
}

func deleteOptionsObject(o *deleteOptions) runtime.Object {
	opts := o.DeleteOptions.DeepCopy()
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	return opts
}

// equivalents answers matchPolicy Equivalent from the live scopes: the same resource in the other
// versions of its group is equivalent, as kube's registry says for resources stored together.
type equivalents struct{ api *API }

var _ runtime.EquivalentResourceMapper = equivalents{}

func (e equivalents) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	scopes := *e.api.scopes.Load()
	// kube keys equivalence by storage: resources stored alike (events.k8s.io events are core events)
	// are equivalent too.
	stored := resource.GroupResource()
	if s, ok := scopes[scopeKey{resource.Group, resource.Version, resource.Resource, ""}]; ok {
		stored = s.storage
	}
	var out []schema.GroupVersionResource
	for k, s := range scopes {
		if k.subresource == subresource && ((k.group == resource.Group && k.resource == resource.Resource) || s.storage == stored) {
			out = append(out, schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource})
		}
	}
	return out
}

func (e equivalents) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if s, ok := (*e.api.scopes.Load())[scopeKey{resource.Group, resource.Version, resource.Resource, subresource}]; ok {
		return s.objectGVK
	}
	return schema.GroupVersionKind{}
}

// Limits of kube's warning recorder (k8s.io/apiserver/pkg/endpoints/filters/warning.go).
const (
	warningsTotalRunes = 4 * 1024
	warningItemRunes   = 256
)

// warningRecorder writes the warnings of admission as Warning headers, deduplicated and truncated
// as kube's recorder does.
type recordedWarning struct{ agent, text string }

type warningRecorder struct {
	w          http.ResponseWriter
	mu         sync.Mutex
	seen       map[string]bool
	ordered    []recordedWarning
	written    int
	truncating bool
}

var _ warning.Recorder = (*warningRecorder)(nil)

// AddWarning implements warning.Recorder.
func (r *warningRecorder) AddWarning(agent, text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.truncating && r.written >= warningsTotalRunes {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[text] {
		return
	}
	r.seen[text] = true
	r.ordered = append(r.ordered, recordedWarning{agent, text})
	n := utf8.RuneCountInString(text)
	if r.truncating {
		text, n = truncateRunes(text, n)
	}
	if r.written+n <= warningsTotalRunes || r.truncating {
		if h, err := utilnet.NewWarningHeader(299, agent, text); err == nil {
			r.written += n
			r.w.Header().Add("Warning", h)
		}
		return
	}
	// Over the limit: start again with every warning cut to warningItemRunes, as kube does.
	r.truncating, r.written = true, 0
	r.w.Header().Del("Warning")
	for _, rw := range r.ordered {
		t, n := truncateRunes(rw.text, utf8.RuneCountInString(rw.text))
		if h, err := utilnet.NewWarningHeader(299, rw.agent, t); err == nil {
			r.written += n
			r.w.Header().Add("Warning", h)
		}
	}
}

func truncateRunes(text string, n int) (string, int) {
	if n <= warningItemRunes {
		return text, n
	}
	return string([]rune(text)[:warningItemRunes]), warningItemRunes
}
