package patch

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Request is one PATCH request: what the URL, the headers, the query and the body say. It stays the
// same when the handler retries after a storage conflict; only the current object changes.
type Request struct {
	Target
	// Type is the patch type, from ParseType.
	Type types.PatchType
	// Namespace and Name come from the URL; Namespace is "" for cluster-scoped resources.
	Namespace string
	Name      string
	// Patch is the request body as sent (JSON, or YAML for apply).
	Patch []byte
	// Options are the query parameters fieldManager, force, fieldValidation and dryRun, checked as
	// kube checks them; dryRun changes nothing here (not writing is the handler's part).
	Options metav1.PatchOptions
	// UserAgent names the manager of a non-apply patch that sets no fieldManager, as in kube.
	UserAgent string
	// Decode, when set, decodes the object a JSON, merge or strategic merge patch produced once
	// more, as the handler decodes a request body of the resource: a custom resource's schema
	// prunes unknown fields (reporting them per fieldValidation) and applies its defaults. It runs
	// before the field manager records the write, as kube decodes a patched object before its field
	// manager runs, so that the patcher owns the defaults its patch brought back. Its warnings
	// follow the patcher's own. An apply is defaulted by the handler afterwards: the field manager
	// records what the configuration applied, defaults or not.
	Decode func(obj runtime.Object) (runtime.Object, []string, error)
}

// Result is a patched object.
type Result struct {
	// Object is the new object: a pointer to the kind's k8s.io/api type, or an
	// *unstructured.Unstructured for custom resources, with apiVersion, kind and managedFields set.
	// It still has to go through the registry's create or update rules.
	Object runtime.Object
	// Created is true when an apply made an object that did not exist (the handler answers 201).
	Created bool
	// Warnings are unknown or duplicate fields under fieldValidation=Warn, for Warning headers.
	Warnings []string
}

// Patch applies req to current, the stored object, or to nothing when current is nil (the object
// does not exist: an apply to the resource creates it, anything else answers 404). current is not
// modified. The result already has its managedFields: do not pass it to Update.
//
// Every error is a *StatusError: 415 for a media type the target refuses, 422 for invalid options
// (an apply without fieldManager), 400 for a malformed patch, 413 for too many JSON patch
// operations, 422 for a patch that does not apply, 409 for apply conflicts, 500 for handler bugs
// (an object of the wrong Go type, an unknown target, ownership machinery that could not be built).
func (p *Patcher) Patch(current runtime.Object, req Request) (*Result, error) {
	tg, err := p.target(req.Target)
	if err != nil {
		return nil, err
	}
	// kube checks the media type before the options.
	if err := tg.accepts(req.Type); err != nil {
		return nil, err
	}
	if errs := validation.ValidatePatchOptions(&req.Options, req.Type); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	if current != nil {
		if err := tg.check(current, "the current"); err != nil {
			return nil, internalError(err)
		}
	}
	if current == nil && (req.Type != types.ApplyYAMLPatchType || tg.subresource != "") {
		// Only an apply to the resource itself creates; subresources never do.
		return nil, apierrors.NewNotFound(tg.gr, req.Name)
	}
	own, err := tg.ownershipOf()
	if err != nil {
		return nil, err
	}
	strict := newStrictness(req.Options.FieldValidation)
	var obj runtime.Object
	switch req.Type {
	case types.ApplyYAMLPatchType:
		obj, err = tg.apply(own, current, req, strict)
	case types.JSONPatchType, types.MergePatchType:
		obj, err = tg.jsonPatch(current, req, strict)
	case types.StrategicMergePatchType:
		obj, err = tg.strategicPatch(current, req, strict)
	}
	if err != nil {
		return nil, internalError(err)
	}
	warnings, err := strict.verdict()
	if err != nil {
		return nil, err
	}
	if req.Type != types.ApplyYAMLPatchType {
		// The apply has its managedFields from the field manager's Apply; the other patches are
		// recorded as updates of the decoded object.
		if req.Decode != nil {
			decoded, more, err := req.Decode(obj)
			if err != nil {
				return nil, internalError(err)
			}
			if err := tg.check(decoded, "the decoded"); err != nil {
				return nil, internalError(err)
			}
			obj, warnings = decoded, append(warnings, more...)
		}
		obj = own.track(current, obj, Manager(req.Options.FieldManager, req.UserAgent))
	}
	if err := tg.checkIdentity(obj, current == nil, req); err != nil {
		return nil, err
	}
	return &Result{Object: obj, Created: current == nil, Warnings: warnings}, nil
}

// checkIdentity holds the patched object to the URL, as kube's patcher does after every patch: a
// created object may not bring a uid, the namespace defaults to the URL's and must match it, and
// the name must be the URL's.
func (tg *target) checkIdentity(obj runtime.Object, created bool, req Request) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return internalError(err)
	}
	if created && m.GetUID() != "" {
		return apierrors.NewConflict(tg.gr, req.Name,
			fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", m.GetUID()))
	}
	ns := req.Namespace
	if !tg.namespaced {
		ns = ""
	}
	switch objNS := m.GetNamespace(); {
	case objNS == ns:
	case objNS == "":
		m.SetNamespace(ns)
	case ns == "":
		m.SetNamespace("")
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if m.GetName() != req.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.Name))
	}
	return nil
}
