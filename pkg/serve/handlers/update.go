package handlers

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// update answers PUT of an object, its status or a namespace's finalizers.
func (s *scope) update(w http.ResponseWriter, r *http.Request, p routes.Params) {
	if s.isScale() {
		s.updateScale(w, r, p)
		return
	}
	req, ok := s.readWrite(w, r, "UpdateOptions", p.Name)
	if !ok {
		return
	}
	obj, warnings, err := s.decodeObject(req.body, req.bodyFormat, req.opts.fieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, created, err := s.store.updateObject(r.Context(), obj, p, req.opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	addWarnings(w, warnings)
	writeJSON(w, r, code, req.out.format, body)
}

// updateObject replaces the stored object with obj under the route's rules and returns the response
// body, and whether the PUT created it (for the kinds that allow that).
func (s *store) updateObject(ctx context.Context, obj runtime.Object, p routes.Params, opts *writeOptions) ([]byte, bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	if m.GetName() != p.Name {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), p.Name))
	}
	if s.res.Namespaced {
		if m.GetNamespace() == "" {
			m.SetNamespace(p.Namespace)
		} else if m.GetNamespace() != p.Namespace {
			return nil, false, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		m.SetNamespace("")
	}
	expected, err := parseResourceVersion(m.GetResourceVersion())
	if err != nil {
		return nil, false, err
	}
	key := s.key(p.Namespace, p.Name)
	next := func(current storage.KeyValue) ([]byte, error) {
		// Decoded first, as kube's store decodes the object before it calls the update: a stored object
		// that does not convert to the route's version fails the PUT, whatever else is wrong with it.
		old, err := s.decodeStored(current)
		if err != nil {
			return nil, err
		}
		// Checked only once the object is known to exist: a PUT that creates needs no version.
		if expected == 0 && !s.allowUnconditionalUpdate() {
			// kube's store names the resource where the kind goes in this one.
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: s.gr.Group, Kind: s.gr.Resource}, p.Name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), expected, "must be specified for an update")})
		}
		tracked, err := s.patcher.Update(s.patchTarget(), old, obj.DeepCopyObject(), patch.Manager(opts.fieldManager, opts.userAgent))
		if err != nil {
			return nil, err
		}
		// Admission runs inside the compare-and-swap, as kube's does: a retry admits the retried object.
		adm := s.startAdmission(ctx, kadmission.Update, tracked, old, p.Namespace, p.Name, updateOptions(opts), opts.dryRun)
		if err := adm.mutate(ctx); err != nil {
			return nil, err
		}
		updated, err := s.applyUpdate(ctx, tracked, old)
		if err != nil {
			return nil, err
		}
		if err := adm.validate(ctx); err != nil {
			return nil, err
		}
		return s.encode(updated)
	}
	kv, err := s.guaranteedUpdate(ctx, key, opts.dryRun, next, storage.UpdateOptions{ExpectedRevision: expected, TTL: s.ttl})
	if err != nil {
		return s.createOnUpdate(ctx, obj, p, opts, err)
	}
	if !opts.dryRun {
		if kv, err = s.finishIfFinalized(ctx, key, kv); err != nil {
			return nil, false, apiError(err, s.gr, p.Name)
		}
	}
	body, err := s.respond(kv)
	return body, false, err
}

// guaranteedUpdate is the store's GuaranteedUpdate, or for a dry run the same steps without the write:
// read the object, refuse a stale o.ExpectedRevision, and return what fn makes of it at the revision
// read. Either way errors are the store's or fn's, so callers handle both runs alike.
func (s *store) guaranteedUpdate(ctx context.Context, key string, dryRun bool, fn storage.UpdateFunc, o storage.UpdateOptions) (storage.KeyValue, error) {
	if !dryRun {
		return s.backend.GuaranteedUpdate(ctx, key, fn, o)
	}
	current, err := s.backend.Get(ctx, key, storage.GetOptions{})
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
func (s *store) createOnUpdate(ctx context.Context, obj runtime.Object, p routes.Params, opts *writeOptions, err error) ([]byte, bool, error) {
	if !storage.IsNotFound(err) || !s.allowCreateOnUpdate {
		return nil, false, apiError(err, s.gr, p.Name)
	}
	body, err := s.createObject(ctx, obj, p.Namespace, opts)
	return body, true, err
}

// applyUpdate makes the object to store from what the client sent (obj) and what is stored (old).
func (s *store) applyUpdate(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
	if err := s.checkEscalation(ctx, obj, old); err != nil {
		return nil, err
	}
	switch {
	case s.sub != nil && s.sub.Name == "status":
		obj = s.strategy.PrepareForStatusUpdate(obj, old)
	case s.sub != nil && s.strategy.WritesSubresource(s.sub.Name):
		obj = s.strategy.PrepareForSubresourceUpdate(s.sub.Name, obj, old)
	default:
		if err := s.strategy.PrepareForUpdate(obj, old); err != nil {
			return nil, err
		}
	}
	if err := s.validateUpdate(ctx, obj, old); err != nil {
		return nil, err
	}
	if err := s.kindAdmission(ctx, kadmission.Update, obj, old, nil, false); err != nil {
		return nil, err
	}
	if s.sub == nil {
		recordWarnings(ctx, s.strategy.WarningsOnUpdate(obj, old))
	}
	return obj, nil
}

// validateUpdate applies the kind's update rules, or a custom resource's schema: a status write is
// checked against the status schema only, and parts that did not change are not held against it.
func (s *store) validateUpdate(ctx context.Context, obj, old runtime.Object) error {
	u, ok1 := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok1 || !ok2 || s.crv == nil {
		switch {
		case s.sub != nil && s.sub.Name == "status":
			return s.strategy.ValidateStatusUpdate(obj, old)
		case s.sub != nil && s.strategy.WritesSubresource(s.sub.Name):
			return s.strategy.ValidateSubresourceUpdate(s.sub.Name, obj, old)
		}
		return s.strategy.ValidateUpdate(obj, old)
	}
	if s.sub != nil && s.sub.Name == "status" {
		return s.crv.Invalid(u.GetName(), s.crv.ValidateStatusUpdate(ctx, u, o))
	}
	return s.crv.InvalidObject(u, u.GetName(), s.crv.ValidateUpdate(ctx, u, o))
}

// allowUnconditionalUpdate reports whether a PUT without resourceVersion overwrites whatever is
// stored, as the kind's store rules say.
func (s *store) allowUnconditionalUpdate() bool {
	return s.strategy == nil || !s.strategy.StoreRules().RequireResourceVersion
}
