package store

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

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

// AdmissionRun is the admission of one write.
type AdmissionRun struct {
	chain Admission
	attrs *admission.Attributes
	objs  *admission.Objects
}

// StartAdmission prepares the admission of a write, or returns nil when no plugin may act on it.
// name is what kube's attributes carry: empty for a create with generateName and for each object of
// a deletecollection.
func (s *Store) StartAdmission(ctx context.Context, op kadmission.Operation, obj, old runtime.Object, namespace, name string, options runtime.Object, dryRun bool) *AdmissionRun {
	chain := s.env.Admission()
	if chain == nil {
		return nil
	}
	sub := ""
	if s.Sub != nil {
		sub = s.Sub.Name
	}
	return &AdmissionRun{
		chain: chain,
		attrs: admission.NewAttributes(admission.Request{
			Object: obj, OldObject: old, Kind: s.ObjectGVK, Resource: s.GVR, Subresource: sub,
			Namespace: namespace, Name: name, Operation: op, Options: options, DryRun: dryRun,
			User: kubeUser(ctx),
		}),
		objs: s.admissionObjects(),
	}
}

// Mutate runs the mutating plugins; they change the object in place.
func (ar *AdmissionRun) Mutate(ctx context.Context) error {
	if ar == nil {
		return nil
	}
	err := ar.chain.Admit(ctx, ar.attrs, ar.objs)
	audit.AddAnnotations(ctx, ar.attrs.GetAnnotations)
	return err
}

// Validate runs the validating plugins on the object as it will be stored.
func (ar *AdmissionRun) Validate(ctx context.Context) error {
	if ar == nil {
		return nil
	}
	err := ar.chain.Validate(ctx, ar.attrs, ar.objs)
	audit.AddAnnotations(ctx, ar.attrs.GetAnnotations)
	return err
}

// Admit runs both phases, for deletes: there is no object of the kind's own validation between them.
func (ar *AdmissionRun) Admit(ctx context.Context) error {
	if err := ar.Mutate(ctx); err != nil {
		return err
	}
	return ar.Validate(ctx)
}

// admissionObjects are how the plugins create, convert and default this scope's objects.
func (s *Store) admissionObjects() *admission.Objects {
	o := &admission.Objects{Mapper: s.env.Mapper, ConvertKind: s.kindConverter()}
	if s.Conv != nil {
		conv := s.Conv
		o.Convert = func(in *unstructured.Unstructured, to schema.GroupVersionKind) (*unstructured.Unstructured, error) {
			return conv.Convert(in, to.Version)
		}
	}
	o.Default = s.checks.defaults()
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
func createOptions(o *WriteOptions) runtime.Object {
	opts := &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"}, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return opts
}

func updateOptions(o *WriteOptions) runtime.Object {
	opts := &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"}, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return opts
}

// patchUpdateOptions are the UpdateOptions kube admits a patch with (its patchToUpdateOptions).
func PatchUpdateOptions(o metav1.PatchOptions) runtime.Object {
	return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"},
		DryRun: o.DryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
}

func deleteOptionsObject(o *DeleteOptions) runtime.Object {
	opts := o.DeleteOptions.DeepCopy()
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	return opts
}
