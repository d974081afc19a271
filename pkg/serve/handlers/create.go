package handlers

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// maxNameGenerations is how often a create retries a generated name that is taken, as kube does.
const maxNameGenerations = 8

// create answers POST: decode, settle name and namespace, apply the kind's rules, store, 201.
func (s *scope) create(w http.ResponseWriter, r *http.Request, p routes.Params) {
	req, ok := s.readWrite(w, r, "CreateOptions", "")
	if !ok {
		return
	}
	obj, warnings, err := s.decodeObject(req.body, req.bodyFormat, req.opts.fieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := s.store.createObject(r.Context(), obj, p.Namespace, req.opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	addWarnings(w, warnings)
	writeJSON(w, r, http.StatusCreated, req.out.format, body)
}

// createObject creates obj, settled in namespace, and returns the response body. PUT uses it too for
// kinds that allow create-on-update.
func (s *store) createObject(ctx context.Context, obj runtime.Object, namespace string, opts *writeOptions) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if s.terminating {
		// kube's forbidCreateAdmission: the CRD's cleanup is deleting every instance.
		return nil, apierrors.NewForbidden(s.gr, m.GetName(), errCRDTerminating)
	}
	if s.res.Namespaced {
		switch m.GetNamespace() {
		case "":
			m.SetNamespace(namespace)
		case namespace:
		default:
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		m.SetNamespace("")
	}
	generated := m.GetName() == ""
	if generated {
		if m.GetGenerateName() == "" {
			return nil, apierrors.NewInvalid(s.strategy.GVK.GroupKind(), "", field.ErrorList{
				field.Required(field.NewPath("metadata", "name"), "name or generateName is required"),
			})
		}
		m.SetName(registry.GenerateName(m.GetGenerateName()))
	}
	if s.res.Namespaced {
		if err := s.api.checkNamespace(ctx, s.gr, m.GetName(), namespace); err != nil {
			return nil, err
		}
	}
	if !opts.managed {
		var err error
		if obj, err = s.patcher.Update(s.patchTarget(), nil, obj, patch.Manager(opts.fieldManager, opts.userAgent)); err != nil {
			return nil, err
		}
		if m, err = meta.Accessor(obj); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	adm, generated, err := s.admitCreate(ctx, obj, m, generated, opts)
	if err != nil {
		return nil, err
	}
	if err := s.checkEscalation(ctx, obj, nil); err != nil {
		return nil, err
	}
	if err := s.strategy.PrepareForCreate(obj, s.api.cfg.Now()); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	s.strategy.PrepareForCreateBy(obj, kubeUser(ctx))
	if err := s.validateCreate(ctx, obj, m.GetName()); err != nil {
		return nil, err
	}
	if err := s.kindAdmission(ctx, kadmission.Create, obj, nil, createOptions(opts), opts.dryRun); err != nil {
		return nil, err
	}
	recordWarnings(ctx, s.strategy.WarningsOnCreate(obj))
	if err := adm.validate(ctx); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		value, err := s.encode(obj)
		if err != nil {
			return nil, apiError(err, s.gr, m.GetName()) // a conversion's Status passes as it is
		}
		if opts.dryRun {
			return s.dryRunBody(value)
		}
		kv, err := s.backend.Create(ctx, s.key(m.GetNamespace(), m.GetName()), value, s.ttl)
		if storage.IsAlreadyExists(err) && generated {
			if attempt < maxNameGenerations {
				m.SetName(registry.GenerateName(m.GetGenerateName()))
				continue
			}
			e := apierrors.NewAlreadyExists(s.gr, m.GetName())
			e.ErrStatus.Message = fmt.Sprintf("%s, the server was not able to generate a unique name for the object", e.ErrStatus.Message)
			e.ErrStatus.Details.RetryAfterSeconds = 1
			return nil, e
		}
		if err != nil {
			return nil, apiError(err, s.gr, m.GetName())
		}
		return s.respond(kv)
	}
}

// validateCreate applies the kind's rules, or a custom resource's schema (which includes the metadata
// rules).
func (s *store) validateCreate(ctx context.Context, obj runtime.Object, name string) error {
	if u, ok := obj.(*unstructured.Unstructured); ok && s.crv != nil {
		return s.crv.InvalidObject(u, name, s.crv.Validate(ctx, u))
	}
	return s.strategy.ValidateCreate(obj)
}

// admitCreate runs the mutating admission of a create, which may change obj. As in kube, the plugins
// see a create with generateName without a name; one that sets a name makes it the object's.
func (s *store) admitCreate(ctx context.Context, obj runtime.Object, m metav1.Object, generated bool, opts *writeOptions) (*admissionRun, bool, error) {
	name := m.GetName()
	admName := name
	if generated {
		admName = ""
	}
	adm := s.startAdmission(ctx, kadmission.Create, obj, nil, m.GetNamespace(), admName, createOptions(opts), opts.dryRun)
	if adm == nil {
		return nil, generated, nil
	}
	if generated {
		m.SetName("")
	}
	err := adm.mutate(ctx)
	switch {
	case m.GetName() == "":
		m.SetName(name)
	case generated:
		generated = false
	}
	return adm, generated, err
}
