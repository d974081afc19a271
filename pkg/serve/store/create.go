package store

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry"
	"github.com/apictl/apictl/pkg/storage"
)

// CreateObject creates obj, settled in namespace, and returns the response body. PUT uses it too for
// kinds that allow create-on-update.
func (s *Store) CreateObject(ctx context.Context, obj runtime.Object, namespace string, opts *WriteOptions) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if s.Terminating {
		// kube's forbidCreateAdmission: the CRD's cleanup is deleting every instance.
		return nil, apierrors.NewForbidden(s.GR, m.GetName(), ErrCRDTerminating)
	}
	if s.Res.Namespaced {
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
			return nil, apierrors.NewInvalid(s.Strategy.GVK.GroupKind(), "", field.ErrorList{
				field.Required(field.NewPath("metadata", "name"), "name or generateName is required"),
			})
		}
		m.SetName(registry.GenerateName(m.GetGenerateName()))
	}
	if s.Res.Namespaced {
		if err := s.env.CheckNamespace(ctx, s.GR, m.GetName(), namespace); err != nil {
			return nil, err
		}
	}
	if !opts.Managed {
		var err error
		if obj, err = s.Patcher.Update(s.PatchTarget(), nil, obj, patch.Manager(opts.FieldManager, opts.UserAgent)); err != nil {
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
	if err := s.Strategy.PrepareForCreate(obj, s.env.Now()); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	s.Strategy.PrepareForCreateBy(obj, kubeUser(ctx))
	if err := s.checks.validateCreate(ctx, obj, m.GetName()); err != nil {
		return nil, err
	}
	if err := s.kindAdmission(ctx, kadmission.Create, obj, nil, createOptions(opts), opts.DryRun); err != nil {
		return nil, err
	}
	RecordWarnings(ctx, s.Strategy.WarningsOnCreate(obj))
	if err := adm.Validate(ctx); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		value, err := s.Encode(obj)
		if err != nil {
			return nil, APIError(err, s.GR, m.GetName()) // a conversion's Status passes as it is
		}
		if opts.DryRun {
			return s.DryRunBody(value)
		}
		kv, err := s.Backend.Create(ctx, s.Key(m.GetNamespace(), m.GetName()), value, s.TTL)
		if storage.IsAlreadyExists(err) && generated {
			if attempt < maxNameGenerations {
				m.SetName(registry.GenerateName(m.GetGenerateName()))
				continue
			}
			e := apierrors.NewAlreadyExists(s.GR, m.GetName())
			e.ErrStatus.Message = fmt.Sprintf("%s, the server was not able to generate a unique name for the object", e.ErrStatus.Message)
			e.ErrStatus.Details.RetryAfterSeconds = 1
			return nil, e
		}
		if err != nil {
			return nil, APIError(err, s.GR, m.GetName())
		}
		return s.Respond(kv)
	}
}

// admitCreate runs the mutating admission of a create, which may change obj. As in kube, the plugins
// see a create with generateName without a name; one that sets a name makes it the object's.
func (s *Store) admitCreate(ctx context.Context, obj runtime.Object, m metav1.Object, generated bool, opts *WriteOptions) (*AdmissionRun, bool, error) {
	name := m.GetName()
	admName := name
	if generated {
		admName = ""
	}
	adm := s.StartAdmission(ctx, kadmission.Create, obj, nil, m.GetNamespace(), admName, createOptions(opts), opts.DryRun)
	if adm == nil {
		return nil, generated, nil
	}
	if generated {
		m.SetName("")
	}
	err := adm.Mutate(ctx)
	switch {
	case m.GetName() == "":
		m.SetName(name)
	case generated:
		generated = false
	}
	return adm, generated, err
}

// maxNameGenerations is how often a create retries a generated name that is taken, as kube does.
const maxNameGenerations = 8

// ErrCRDTerminating is kube's reason for refusing creates of a CRD being deleted.
var ErrCRDTerminating = errors.New("create not allowed while custom resource definition is terminating")

// RecordWarnings sends a kind's warnings about a write (registry.Strategy.WarningsOnCreate and
// WarningsOnUpdate) through the request's warning recorder, as kube's store does: like admission's,
// they are deduplicated and sent whether or not the write then succeeds.
func RecordWarnings(ctx context.Context, msgs []string) {
	for _, m := range msgs {
		warning.AddWarning(ctx, "", m)
	}
}
