package handlers

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kadmission "k8s.io/apiserver/pkg/admission"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/storage"
)

// deleteOptions are a delete's options, from its body or its query.
type deleteOptions struct {
	metav1.DeleteOptions
	dryRun bool
	// collection is set for the deletes of a deletecollection, which kube admits without a name.
	collection bool
}

// parseDeleteOptions reads DeleteOptions from the body when there is one, else from the query, and
// checks them as kube does.
func parseDeleteOptions(r *http.Request) (*deleteOptions, error) {
	o := &deleteOptions{}
	body, format, err := readBody(r)
	if err != nil {
		return nil, err
	}
	switch {
	case len(body) == 0:
	case format == formatProtobuf:
		if err := o.DeleteOptions.Unmarshal(protobufPayload(body)); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
		}
	default:
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &o.DeleteOptions); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding DeleteOptions: %v", err))
		}
	}
	q := r.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" && o.GracePeriodSeconds == nil {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q: %v", v, err))
		}
		o.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" && o.PropagationPolicy == nil {
		policy := metav1.DeletionPropagation(v)
		o.PropagationPolicy = &policy
	}
	if b, ok := request.QueryParamBool(q, "orphanDependents"); ok && o.OrphanDependents == nil {
		o.OrphanDependents = &b
	}
	if len(o.DryRun) == 0 {
		o.DryRun = q["dryRun"]
	}
	var errs field.ErrorList
	o.dryRun, errs = parseDryRun(o.DryRun)
	if o.OrphanDependents != nil && o.PropagationPolicy != nil {
		errs = append(errs, field.Invalid(field.NewPath("propagationPolicy"), o.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set"))
	}
	if p := o.PropagationPolicy; p != nil && *p != metav1.DeletePropagationOrphan && *p != metav1.DeletePropagationBackground && *p != metav1.DeletePropagationForeground {
		errs = append(errs, field.NotSupported(field.NewPath("propagationPolicy"), *p, []string{
			string(metav1.DeletePropagationForeground), string(metav1.DeletePropagationBackground), string(metav1.DeletePropagationOrphan), "nil"}))
	}
	if g := o.GracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(field.NewPath("gracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return o, nil
}

// storedMeta is what deletes need from a stored object.
type storedMeta struct {
	// APIVersion is the version the object was written at (custom resources may have several).
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		UID               types.UID    `json:"uid"`
		Finalizers        []string     `json:"finalizers"`
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		// Namespaces only: the finalizers of the namespace lifecycle.
		Finalizers []string `json:"finalizers"`
	} `json:"spec"`
}

// errGraceful tells delete's check that the object must be marked for deletion rather than removed.
var errGraceful = errors.New("object has finalizers")

// delete answers DELETE of one object.
func (s *scope) delete(w http.ResponseWriter, r *http.Request, p routes.Params) {
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, apiError(err, s.gr, p.Name))
		return
	}
	body, code, err := s.deleteObject(r, p.Namespace, p.Name, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, code, formatJSON, body)
}

// deleteObject removes an object, or, when it has finalizers (a namespace always does), sets its
// deletionTimestamp and leaves the rest to whoever owns the finalizers. It returns kube's response:
// a Success Status for a removal, the object for a deletion that is pending.
//
// propagationPolicy is accepted but changes nothing: this server has no garbage collector to honour
// the finalizers Foreground and Orphan would add, and an object waiting for one would never go.
func (s *scope) deleteObject(r *http.Request, namespace, name string, opts *deleteOptions) ([]byte, int, error) {
	ctx := r.Context()
	key := s.key(namespace, name)
	check := func(current storage.KeyValue) error {
		var m storedMeta
		if err := json.Unmarshal(current.Value, &m); err != nil {
			return fmt.Errorf("reading stored %s: %w", key, err)
		}
		if err := s.checkConvertible(current); err != nil {
			return err
		}
		if err := checkPreconditions(opts.Preconditions, m.Metadata.UID, current.ModRevision); err != nil {
			// kube's BeforeDelete names the kind, not the resource, in this conflict.
			return apierrors.NewConflict(schema.GroupResource{Group: s.gr.Group, Resource: s.strategy.GVK.Kind}, name, err)
		}
		if err := s.admitDelete(ctx, current, namespace, name, opts); err != nil {
			return err
		}
		if len(m.Metadata.Finalizers) > 0 || len(m.Spec.Finalizers) > 0 {
			return errGraceful
		}
		if s.gr == crdResource && m.Metadata.DeletionTimestamp == nil {
			return errGraceful // the first delete of a CRD only starts its cleanup (markDeleted)
		}
		return nil
	}
	if opts.dryRun {
		current, err := s.store.Get(ctx, key, storage.GetOptions{})
		if err == nil {
			err = check(current)
		}
		if err != nil && !errors.Is(err, errGraceful) {
			return nil, 0, apiError(err, s.gr, name)
		}
		body, err := s.respond(current)
		return body, http.StatusOK, err
	}
	kv, err := s.store.Delete(ctx, key, check)
	switch {
	case errors.Is(err, errGraceful):
		if kv, err = s.markDeleted(ctx, key); err != nil {
			return nil, 0, apiError(err, s.gr, name)
		}
		body, err := s.respond(kv)
		return body, http.StatusOK, err
	case err != nil:
		return nil, 0, apiError(err, s.gr, name)
	}
	if s.gr == corev1.Resource("services") {
		// kube's service storage answers a removal with the object as it was, not a Status.
		body, err := s.respond(kv)
		return body, http.StatusOK, err
	}
	var m storedMeta
	_ = json.Unmarshal(kv.Value, &m)
	body, err := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: name, Group: s.gr.Group, Kind: s.gr.Resource, UID: m.Metadata.UID},
	})
	return body, http.StatusOK, err
}

// markDeleted sets deletionTimestamp (and a namespace's Terminating phase) once, and returns the object
// as stored. The object is decoded and encoded as the scope's kind, so a custom resource's integers
// keep every digit.
func (s *scope) markDeleted(ctx context.Context, key string) (storage.KeyValue, error) {
	now := metav1.NewTime(s.api.cfg.Now().UTC())
	var name string
	kv, err := s.store.GuaranteedUpdate(ctx, key, func(current storage.KeyValue) ([]byte, error) {
		obj, err := s.decodeStored(current)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		name = m.GetName()
		if m.GetDeletionTimestamp() != nil {
			return current.Value, nil
		}
		m.SetDeletionTimestamp(&now)
		if ns, ok := obj.(*corev1.Namespace); ok {
			// kube's namespace storage sets no grace period, only the phase.
			ns.Status.Phase = corev1.NamespaceTerminating
		} else if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			markCRDTerminating(crd)
		} else {
			// As kube's store marks an object that waits for finalizers and has no graceful deletion.
			zero := int64(0)
			m.SetDeletionGracePeriodSeconds(&zero)
		}
		return s.encode(obj)
	}, storage.UpdateOptions{})
	if err != nil {
		return kv, err
	}
	if s.gr == corev1.Resource("namespaces") {
		s.api.recentlyDeleted.add(name, now.Time)
		s.api.notifyNamespaceChanged()
	}
	return kv, nil
}

// finishIfFinalized removes an object whose deletion was pending once its last finalizer is gone, as
// kube's store does after such an update; it returns the object as last stored.
func (s *scope) finishIfFinalized(ctx context.Context, key string, kv storage.KeyValue) (storage.KeyValue, error) {
	if !mayBeTerminating(kv.Value) {
		return kv, nil // the common case, found without decoding: no deletion pending
	}
	var m storedMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return kv, err
	}
	if m.Metadata.DeletionTimestamp == nil || len(m.Metadata.Finalizers) > 0 || len(m.Spec.Finalizers) > 0 {
		return kv, nil
	}
	return kv, s.deleteAtRevision(ctx, key, kv.ModRevision)
}

// deleteAtRevision deletes key if it is still at revision rev. An object changed since is left to
// whoever changed it, and one already gone is no error.
func (s *scope) deleteAtRevision(ctx context.Context, key string, rev int64) error {
	_, err := s.store.Delete(ctx, key, func(current storage.KeyValue) error {
		if current.ModRevision != rev {
			return errGraceful // changed since: whoever changed it decides
		}
		return nil
	})
	if err != nil && !errors.Is(err, errGraceful) && !storage.IsNotFound(err) {
		return err
	}
	return nil
}

// checkPreconditions compares DeleteOptions' preconditions with the stored object, with kube's message.
func checkPreconditions(p *metav1.Preconditions, uid types.UID, rev int64) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != uid {
		return fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, uid)
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != strconv.FormatInt(rev, 10) {
		return fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", *p.ResourceVersion, rev)
	}
	return nil
}

// deleteCollection answers DELETE of a collection: every object the selectors match is deleted as a
// DELETE of it would be.
func (s *scope) deleteCollection(w http.ResponseWriter, r *http.Request, p routes.Params) {
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	list, err := parseListOptions(r.URL.Query())
	if err == nil {
		err = s.checkFieldSelector(list.fields)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.store.List(r.Context(), s.prefix(p.Namespace), storage.ListOptions{Filter: s.filter(list.labels, list.fields)})
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	collOpts := *opts
	collOpts.collection = true
	opts = &collOpts
	for _, kv := range res.Items {
		var m struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		if _, _, err := s.deleteObject(r, m.Metadata.Namespace, m.Metadata.Name, opts); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	body, _ := json.Marshal(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
	writeJSON(w, r, http.StatusOK, formatJSON, body)
}

// admitDelete runs admission on the delete of the stored object current, as kube's store does once
// the preconditions hold: both phases, with the object as the old object and none as the new.
func (s *scope) admitDelete(ctx context.Context, current storage.KeyValue, namespace, name string, opts *deleteOptions) error {
	if s.api.activeAdmission() == nil {
		return nil
	}
	old, err := s.decodeStored(current)
	if err != nil {
		return err
	}
	admName := name
	if opts.collection {
		admName = ""
	}
	return s.startAdmission(ctx, kadmission.Delete, nil, old, namespace, admName, deleteOptionsObject(opts), opts.dryRun).admit(ctx)
}
