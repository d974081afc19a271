package handlers

import (
	"net/http"
	"sync"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/warning"
)

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
		stored = s.Storage
	}
	var out []schema.GroupVersionResource
	for k, s := range scopes {
		if k.subresource == subresource && ((k.group == resource.Group && k.resource == resource.Resource) || s.Storage == stored) {
			out = append(out, schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource})
		}
	}
	return out
}

func (e equivalents) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if s, ok := (*e.api.scopes.Load())[scopeKey{resource.Group, resource.Version, resource.Resource, subresource}]; ok {
		return s.ObjectGVK
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
