package admission

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Request is what a handler knows of a write when it asks admission.
type Request struct {
	// Object is the object to store (nil for a delete); OldObject the stored one (nil for a
	// create). Built-in kinds are typed k8s.io/api objects, custom resources Unstructured.
	Object, OldObject runtime.Object
	Kind              schema.GroupVersionKind
	Resource          schema.GroupVersionResource
	Subresource       string
	Namespace, Name   string
	Operation         admission.Operation
	// Options are the operation's options: CreateOptions, UpdateOptions or DeleteOptions.
	Options runtime.Object
	DryRun  bool
	User    user.Info
}

// Attributes are kube's admission attributes for one request, with the audit annotations the
// plugins add readable afterwards (kube's own record keeps them private to its audit decorator).
type Attributes struct {
	admission.Attributes
	mu          sync.Mutex
	annotations map[string]annotation
}

type annotation struct {
	level auditinternal.Level
	value string
}

// NewAttributes builds the attributes of r.
func NewAttributes(r Request) *Attributes {
	return &Attributes{Attributes: admission.NewAttributesRecord(r.Object, r.OldObject, r.Kind, r.Namespace, r.Name,
		r.Resource, r.Subresource, r.Operation, r.Options, r.DryRun, r.User)}
}

// AddAnnotation implements admission.Attributes.
func (a *Attributes) AddAnnotation(key, value string) error {
	return a.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

// AddAnnotationWithLevel implements admission.Attributes: kube's record checks and keeps the
// annotation, and a copy is kept for Annotations.
func (a *Attributes) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.annotations == nil {
		a.annotations = map[string]annotation{}
	}
	a.annotations[key] = annotation{level: level, value: value}
	return nil
}

// GetAnnotations implements admission.AnnotationsGetter: the annotations an audit event at
// maxLevel records.
func (a *Attributes) GetAnnotations(maxLevel auditinternal.Level) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.annotations) == 0 {
		return nil
	}
	out := make(map[string]string, len(a.annotations))
	for k, v := range a.annotations {
		if !maxLevel.Less(v.level) {
			out[k] = v.value
		}
	}
	return out
}
