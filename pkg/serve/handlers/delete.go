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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage"
)

// deleteOptions are a delete's options, from its body or its query.
type deleteOptions struct {
	metav1.DeleteOptions
	dryRun bool
	// collection is set for the deletes of a deletecollection, which kube admits without a name.
	collection bool
}

// parseDeleteOptions reads DeleteOptions as kube's delete handlers do: from the body when there is
// one (JSON, YAML or protobuf, any group's DeleteOptions kind, with the messages of kube's meta
// codecs), else from the query, and validates them.
func parseDeleteOptions(r *http.Request) (*deleteOptions, error) {
	o := &deleteOptions{}
	body, format, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		mediaType := mediaJSON // readBody turned YAML into JSON
		if format == formatProtobuf {
			mediaType = mediaProtobuf
		}
		info, ok := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			return nil, unsupportedMediaType(mediaJSON, mediaYAML, mediaProtobuf)
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		decoder := metainternalversionscheme.Codecs.DecoderToVersion(info.Serializer, metav1.SchemeGroupVersion)
		obj, _, err := decoder.Decode(body, &defaultGVK, &o.DeleteOptions)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != &o.DeleteOptions {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &o.DeleteOptions); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	o.TypeMeta = metav1.TypeMeta{}
	// Deletes of objects that cannot be read are not served: the option is dropped, as kube drops it
	// with its AllowUnsafeMalformedObjectDeletion gate off.
	o.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	if errs := metav1validation.ValidateDeleteOptions(&o.DeleteOptions); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	o.dryRun = len(o.DryRun) > 0 // validated: only "All"
	if g := o.GracePeriodSeconds; g != nil && *g < 0 {
		one := int64(1) // as kube's BeforeDelete reads a negative grace period
		o.GracePeriodSeconds = &one
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

var (
	// errGraceful tells delete's check that the object must be marked for deletion rather than removed.
	errGraceful = errors.New("object has finalizers")
	// errDeleteNow tells a marking that the object has no finalizer left to wait for, so it goes now.
	errDeleteNow = errors.New("object has no finalizers")
)

// deleteResult is what a DELETE of one object answers.
type deleteResult struct {
	// body is the JSON answer: a Status, or an object.
	body []byte
	// object is the stored object the body shows, for the answers that show one; nil for a Status
	// and for the empty object of a dry run (dryRunDelete).
	object *storage.KeyValue
	// status is set when body is a Status.
	status bool
	// pending is set when the object stays, marked for deletion, until its finalizers are removed.
	pending bool
}

// objectResult answers with the stored object kv at the route's version.
func (s *store) objectResult(kv storage.KeyValue, pending bool) (deleteResult, error) {
	body, err := s.respond(kv)
	return deleteResult{body: body, object: &kv, pending: pending}, err
}

// encode returns the answer in the negotiated representation: JSON or YAML, or the object's
// PartialObjectMetadata (a Status stays a Status, as kube's transform leaves it).
func (res deleteResult) encode(s *scope, out output) ([]byte, error) {
	switch {
	case out.partial == "" || res.status:
		return res.body, nil
	case out.partial != partialObject:
		return nil, partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", partialObjectList, s.internalTypeName(false)))
	case res.object != nil:
		return s.appendPartial(nil, *res.object, out.partialVersion)
	}
	return json.Marshal(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: partialObject, APIVersion: metav1.GroupName + "/" + out.partialVersion}})
}

// delete answers DELETE of one object: 200 with the object while its deletion is pending (202 when
// the client asked for cascading deletion with orphanDependents=false, as kube answers), 200 with a
// Success Status (or, for the kinds whose kube storage returns it, the object) once it is gone.
func (s *scope) delete(w http.ResponseWriter, r *http.Request, p routes.Params) {
	// As kube, the answer's encoding is negotiated first: a request no answer fits deletes nothing.
	out, err := negotiateOutput(r.Header.Get("Accept"), convPartial)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, apiError(err, s.gr, p.Name))
		return
	}
	res, err := s.store.deleteObject(r.Context(), p.Namespace, p.Name, opts)
	var body []byte
	if err == nil {
		body, err = res.encode(s, out)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if res.pending && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	writeJSON(w, r, code, out.format, body)
}

// deleteObject deletes an object as kube's generic registry store does (its Delete): the garbage
// collector's finalizers are set as the options ask (deletepolicy.go); an object left with finalizers
// (a namespace always has some, and a CRD's first delete starts its cleanup) is marked with a
// deletionTimestamp and stays until whoever owns them removes them; one without is removed.
func (s *store) deleteObject(ctx context.Context, namespace, name string, opts *deleteOptions) (deleteResult, error) {
	key := s.key(namespace, name)
	if opts.dryRun {
		return s.dryRunDelete(ctx, key, namespace, name, opts)
	}
	for attempt := 0; ; attempt++ {
		kv, err := s.backend.Delete(ctx, key, func(current storage.KeyValue) error {
			m, err := s.vetDelete(ctx, current, namespace, name, opts)
			if err != nil {
				return err
			}
			mark, err := s.mustMark(current, m, &opts.DeleteOptions)
			if err != nil {
				return err
			}
			if mark {
				return errGraceful
			}
			return nil
		})
		if errors.Is(err, errGraceful) {
			kv, err = s.markForDeletion(ctx, key, opts)
			if errors.Is(err, errDeleteNow) && attempt < 3 {
				continue // the finalizers went meanwhile: delete it after all
			}
			if err != nil {
				return deleteResult{}, apiError(err, s.gr, name)
			}
			return s.objectResult(kv, true)
		}
		if err != nil {
			return deleteResult{}, apiError(err, s.gr, name)
		}
		return s.removed(kv, name)
	}
}

// vetDelete reads what a delete needs from the stored object and checks, as kube's store does before
// it deletes, that the object converts, that the preconditions hold and that admission allows it.
func (s *store) vetDelete(ctx context.Context, current storage.KeyValue, namespace, name string, opts *deleteOptions) (*storedMeta, error) {
	var m storedMeta
	if err := json.Unmarshal(current.Value, &m); err != nil {
		return nil, fmt.Errorf("reading stored %s: %w", current.Key, err)
	}
	if err := s.checkConvertible(current); err != nil {
		return nil, err
	}
	if err := checkPreconditions(opts.Preconditions, m.Metadata.UID, current.ModRevision); err != nil {
		// kube's BeforeDelete names the kind, not the resource, in this conflict.
		return nil, apierrors.NewConflict(schema.GroupResource{Group: s.gr.Group, Resource: s.strategy.GVK.Kind}, name, err)
	}
	if err := s.admitDelete(ctx, current, namespace, name, opts); err != nil {
		return nil, err
	}
	return &m, nil
}

// mustMark says whether a delete with o leaves the object stored in current (whose metadata is m)
// marked for deletion rather than removed. A kind with rules of its own (kinds.DeleteMarker: a
// Namespace's lifecycle, a CRD's cleanup) decides first, on the decoded object; those deletes are
// rare, and every other kind decides on m alone.
func (s *store) mustMark(current storage.KeyValue, m *storedMeta, o *metav1.DeleteOptions) (bool, error) {
	if dm := s.strategy.DeleteMarker(); dm != nil {
		obj, err := s.decodeStored(current)
		if err != nil {
			return false, err
		}
		if applies, _ := dm.MarkOnDelete(obj, o); applies {
			return true, nil
		}
	}
	finalizers, _ := deletionFinalizers(s.gcPolicy(), m.Metadata.Finalizers, o)
	return len(finalizers) > 0, nil
}

// gcPolicy is the default garbage-collection policy of the scope's kind.
func (s *store) gcPolicy() gcPolicy { return s.strategy.StoreRules().DeletePolicy }

var namespacesResource = corev1.Resource("namespaces")

// removed is the answer to a delete that removed the object kv held: a Success Status naming it,
// or the object for the kinds whose kube storage returns it.
func (s *store) removed(kv storage.KeyValue, name string) (deleteResult, error) {
	if s.strategy.StoreRules().ReturnDeletedObject {
		return s.objectResult(kv, false)
	}
	var m storedMeta
	_ = json.Unmarshal(kv.Value, &m)
	body, err := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: name, Group: s.gr.Group, Kind: s.gr.Resource, UID: m.Metadata.UID},
	})
	return deleteResult{body: body, status: true}, err
}

// dryRunDelete answers a dry-run DELETE with what the delete would answer, writing nothing.
func (s *store) dryRunDelete(ctx context.Context, key, namespace, name string, opts *deleteOptions) (deleteResult, error) {
	current, err := s.backend.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		return deleteResult{}, apiError(err, s.gr, name)
	}
	m, err := s.vetDelete(ctx, current, namespace, name, opts)
	if err != nil {
		return deleteResult{}, apiError(err, s.gr, name)
	}
	mark, err := s.mustMark(current, m, &opts.DeleteOptions)
	if err != nil {
		return deleteResult{}, apiError(err, s.gr, name)
	}
	if !mark {
		if len(m.Metadata.Finalizers) > 0 {
			// kube takes its update path for an object whose finalizers the delete removes, and a dry
			// run of it answers with the store's empty object.
			body, err := s.emptyObject()
			return deleteResult{body: body}, err
		}
		return s.removed(current, name)
	}
	obj, err := s.decodeStored(current)
	if err != nil {
		return deleteResult{}, apiError(err, s.gr, name)
	}
	changed, err := s.applyDeletion(obj, &opts.DeleteOptions, metav1.NewTime(s.api.cfg.Now().UTC()))
	if err != nil {
		return deleteResult{}, apiError(err, s.gr, name)
	}
	if changed {
		value, err := s.encode(obj)
		if err != nil {
			return deleteResult{}, apiError(err, s.gr, name)
		}
		current.Value, current.RVAt, current.RVLast = value, 0, false
	}
	return s.objectResult(current, true)
}

// emptyObject is a new object of the scope's kind with nothing set, as kube's store's New encodes.
func (s *store) emptyObject() ([]byte, error) {
	gvk := s.strategy.GVK
	if s.res.Custom {
		return json.Marshal(map[string]any{"apiVersion": s.gvr.GroupVersion().String(), "kind": gvk.Kind})
	}
	return json.Marshal(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String()}})
}

// markDeleted marks an object with finalizers for deletion, leaving its finalizers as they are (the
// namespace controller's deletes); one whose finalizers went meanwhile is removed.
func (s *store) markDeleted(ctx context.Context, key string) (storage.KeyValue, error) {
	kv, err := s.markForDeletion(ctx, key, nil)
	if !errors.Is(err, errDeleteNow) {
		return kv, err
	}
	kv, err = s.backend.Delete(ctx, key, func(current storage.KeyValue) error {
		var m storedMeta
		if err := json.Unmarshal(current.Value, &m); err != nil {
			return fmt.Errorf("reading stored %s: %w", key, err)
		}
		if len(m.Metadata.Finalizers) > 0 {
			return errGraceful // finalizers came back: leave it to its next delete
		}
		return nil
	})
	if errors.Is(err, errGraceful) {
		return kv, nil
	}
	return kv, err
}

// markForDeletion marks an object for deletion as a delete with opts does (nil opts change no
// finalizer) and returns it as stored; errDeleteNow when it turns out to have no finalizer to wait
// for. The object is decoded and encoded as the scope's kind, so a custom resource's integers keep
// every digit.
func (s *store) markForDeletion(ctx context.Context, key string, opts *deleteOptions) (storage.KeyValue, error) {
	now := metav1.NewTime(s.api.cfg.Now().UTC())
	var o *metav1.DeleteOptions
	if opts != nil {
		o = &opts.DeleteOptions
	}
	var name string
	kv, err := s.backend.GuaranteedUpdate(ctx, key, func(current storage.KeyValue) ([]byte, error) {
		obj, err := s.decodeStored(current)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		name = m.GetName()
		if o != nil {
			if err := checkPreconditions(o.Preconditions, m.GetUID(), current.ModRevision); err != nil {
				return nil, apierrors.NewConflict(schema.GroupResource{Group: s.gr.Group, Resource: s.strategy.GVK.Kind}, name, err)
			}
		}
		changed, err := s.applyDeletion(obj, o, now)
		if err != nil || !changed {
			return current.Value, err
		}
		return s.encode(obj)
	}, storage.UpdateOptions{})
	if err != nil {
		return kv, err
	}
	if s.gr == namespacesResource {
		s.api.recentlyDeleted.add(name, now.Time)
		s.api.notifyNamespaceChanged()
	}
	return kv, nil
}

// applyDeletion changes obj as a delete with o marks it, at now, and reports whether anything
// changed; errDeleteNow when no finalizer is left to wait for. It follows kube's stores: a kind with
// rules of its own marks by them (kinds.DeleteMarker; kube's namespace and CRD storage set no grace
// period, only the deletionTimestamp on the first delete); every other delete sets the garbage
// collector's finalizers (deletionFinalizersForGarbageCollection) and marks the object
// (markAsDeleting: deletionTimestamp, deletionGracePeriodSeconds 0, and the generation bumped once).
func (s *store) applyDeletion(obj runtime.Object, o *metav1.DeleteOptions, now metav1.Time) (bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, err
	}
	first := m.GetDeletionTimestamp() == nil
	if dm := s.strategy.DeleteMarker(); dm != nil {
		if applies, changed := dm.MarkOnDelete(obj, o); applies {
			if first {
				m.SetDeletionTimestamp(&now)
			}
			return changed || first, nil
		}
	}
	finalizers, changed := deletionFinalizers(s.gcPolicy(), m.GetFinalizers(), o)
	if len(finalizers) == 0 {
		return false, errDeleteNow
	}
	if changed {
		m.SetFinalizers(finalizers)
	}
	if first && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if dt := m.GetDeletionTimestamp(); dt == nil || dt.After(now.Time) {
		m.SetDeletionTimestamp(&now)
		changed = true
	}
	if g := m.GetDeletionGracePeriodSeconds(); g == nil || *g != 0 {
		zero := int64(0)
		m.SetDeletionGracePeriodSeconds(&zero)
		changed = true
	}
	return changed, nil
}

// finishIfFinalized removes an object whose deletion was pending once its last finalizer is gone, as
// kube's store does after such an update; it returns the object as last stored.
func (s *store) finishIfFinalized(ctx context.Context, key string, kv storage.KeyValue) (storage.KeyValue, error) {
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
func (s *store) deleteAtRevision(ctx context.Context, key string, rev int64) error {
	_, err := s.backend.Delete(ctx, key, func(current storage.KeyValue) error {
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

// deleteCollection answers DELETE of a collection as kube's store does (DeleteCollection): every
// object the selectors match is deleted as a DELETE of it would be (with the same options, so
// propagationPolicy holds for each), and the answer is the list of the objects as they were listed
// (one page when the client gave a limit, with its continue token).
func (s *scope) deleteCollection(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, err := negotiateOutput(r.Header.Get("Accept"), convPartial)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	list, err := parseListOptions(r.URL.Query())
	if err == nil {
		err = s.fields.check(list.fields)
	}
	if err == nil {
		err = list.checkResourceVersion()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	listOpts := storage.ListOptions{Filter: s.fields.filter(list.labels, list.fields),
		ResourceVersion: list.resourceVersion, ResourceVersionMatch: list.resourceVersionMatch}
	if list.limit > 0 {
		listOpts.Limit, listOpts.Continue = list.limit, list.continueToken
	}
	res, err := s.backend.List(r.Context(), s.prefix(p.Namespace), listOpts)
	if err == nil {
		res, err = s.store.readableList(res) // the answer is at the route's version
	}
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	collOpts := *opts
	collOpts.collection = true
	for _, kv := range res.Items {
		var m struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			writeError(w, r, apierrors.NewInternalError(fmt.Errorf("reading stored %s: %w", kv.Key, err)))
			return
		}
		// Each delete gets its own copy of the options, as in kube, where a delete may change them.
		itemOpts := collOpts
		itemOpts.DeleteOptions = *collOpts.DeleteOptions.DeepCopy()
		if _, err := s.store.deleteObject(r.Context(), m.Metadata.Namespace, m.Metadata.Name, &itemOpts); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if out.partial != "" {
		err = s.writePartialList(buf, out, res, nil)
	} else {
		err = s.writeList(buf, res, nil)
	}
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	writeJSON(w, r, http.StatusOK, out.format, buf.Bytes())
}

// admitDelete runs admission on the delete of the stored object current, as kube's store does once
// the preconditions hold: both phases, with the object as the old object and none as the new.
func (s *store) admitDelete(ctx context.Context, current storage.KeyValue, namespace, name string, opts *deleteOptions) error {
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
