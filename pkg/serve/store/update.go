package store

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// UpdateObject replaces the stored object with obj under the route's rules and returns the response
// body, and whether the PUT created it (for the kinds that allow that).
func (s *Store) UpdateObject(ctx context.Context, obj runtime.Object, p routes.Params, opts *WriteOptions) ([]byte, bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	if m.GetName() != p.Name {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), p.Name))
	}
	if s.Res.Namespaced {
		if m.GetNamespace() == "" {
			m.SetNamespace(p.Namespace)
		} else if m.GetNamespace() != p.Namespace {
			return nil, false, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		m.SetNamespace("")
	}
	expected, err := ParseResourceVersion(m.GetResourceVersion())
	if err != nil {
		return nil, false, err
	}
	key := s.Key(p.Namespace, p.Name)
	next := func(current storage.KeyValue) ([]byte, error) {
		// Decoded first, as kube's store decodes the object before it calls the update: a stored object
		// that does not convert to the route's version fails the PUT, whatever else is wrong with it.
		old, err := s.DecodeStored(current)
		if err != nil {
			return nil, err
		}
		// Checked only once the object is known to exist: a PUT that creates needs no version.
		if expected == 0 && !s.allowUnconditionalUpdate() {
			// kube's store names the resource where the kind goes in this one.
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: s.GR.Group, Kind: s.GR.Resource}, p.Name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), expected, "must be specified for an update")})
		}
		tracked, err := s.Patcher.Update(s.PatchTarget(), old, obj.DeepCopyObject(), patch.Manager(opts.FieldManager, opts.UserAgent))
		if err != nil {
			return nil, err
		}
		// Admission runs inside the compare-and-swap, as kube's does: a retry admits the retried object.
		adm := s.StartAdmission(ctx, kadmission.Update, tracked, old, p.Namespace, p.Name, updateOptions(opts), opts.DryRun)
		if err := adm.Mutate(ctx); err != nil {
			return nil, err
		}
		updated, err := s.ApplyUpdate(ctx, tracked, old)
		if err != nil {
			return nil, err
		}
		if err := adm.Validate(ctx); err != nil {
			return nil, err
		}
		return s.Encode(updated)
	}
	kv, err := s.GuaranteedUpdate(ctx, key, opts.DryRun, next, storage.UpdateOptions{ExpectedRevision: expected, TTL: s.TTL})
	if err != nil {
		return s.createOnUpdate(ctx, obj, p, opts, err)
	}
	if !opts.DryRun {
		if kv, err = s.FinishIfFinalized(ctx, key, kv); err != nil {
			return nil, false, APIError(err, s.GR, p.Name)
		}
	}
	body, err := s.Respond(kv)
	return body, false, err
}

// GuaranteedUpdate is the store's GuaranteedUpdate, or for a dry run the same steps without the write:
// read the object, refuse a stale o.ExpectedRevision, and return what fn makes of it at the revision
// read. Either way errors are the store's or fn's, so callers handle both runs alike.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, dryRun bool, fn storage.UpdateFunc, o storage.UpdateOptions) (storage.KeyValue, error) {
	if !dryRun {
		return s.Backend.GuaranteedUpdate(ctx, key, fn, o)
	}
	current, err := s.Backend.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		return storage.KeyValue{}, err
	}
	if o.ExpectedRevision != 0 && o.ExpectedRevision != current.ModRevision {
		return storage.KeyValue{}, &storage.StorageError{Code: storage.Conflict, Op: "update", Key: key,
			ResourceVersion: o.ExpectedRevision, CurrentRevision: current.ModRevision}
	}
	if current.Value, err = fn(current); err != nil {
		return storage.KeyValue{}, err
	}
	return current, nil
}

// createOnUpdate turns a PUT of a missing object into a create for the kinds kube allows it for;
// otherwise it reports err.
func (s *Store) createOnUpdate(ctx context.Context, obj runtime.Object, p routes.Params, opts *WriteOptions, err error) ([]byte, bool, error) {
	if !storage.IsNotFound(err) || !s.AllowCreateOnUpdate {
		return nil, false, APIError(err, s.GR, p.Name)
	}
	body, err := s.CreateObject(ctx, obj, p.Namespace, opts)
	return body, true, err
}

// ApplyUpdate makes the object to store from what the client sent (obj) and what is stored (old).
func (s *Store) ApplyUpdate(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
	if err := s.checkEscalation(ctx, obj, old); err != nil {
		return nil, err
	}
	switch {
	case s.Sub != nil && s.Sub.Name == "status":
		obj = s.Strategy.PrepareForStatusUpdate(obj, old)
	case s.Sub != nil && s.Strategy.WritesSubresource(s.Sub.Name):
		obj = s.Strategy.PrepareForSubresourceUpdate(s.Sub.Name, obj, old)
	default:
		if err := s.Strategy.PrepareForUpdate(obj, old); err != nil {
			return nil, err
		}
	}
	if err := s.checks.validateUpdate(ctx, obj, old); err != nil {
		return nil, err
	}
	if err := s.kindAdmission(ctx, kadmission.Update, obj, old, nil, false); err != nil {
		return nil, err
	}
	if s.Sub == nil {
		RecordWarnings(ctx, s.Strategy.WarningsOnUpdate(obj, old))
	}
	return obj, nil
}

// allowUnconditionalUpdate reports whether a PUT without resourceVersion overwrites whatever is
// stored, as the kind's store rules say.
func (s *Store) allowUnconditionalUpdate() bool {
	return s.Strategy == nil || !s.Strategy.StoreRules().RequireResourceVersion
}

// PatchTarget names the resource and subresource for the patcher's field managers.
func (s *Store) PatchTarget() patch.Target {
	t := patch.Target{Resource: s.GVR}
	if s.Sub != nil {
		t.Subresource = s.Sub.Name
	}
	return t
}
