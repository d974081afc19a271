package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/storage"
)

// DeleteOptions are a delete's options, from its body or its query.
type DeleteOptions struct {
	metav1.DeleteOptions
	IsDryRun bool
	// Collection is set for the deletes of a deletecollection, which kube admits without a name.
	Collection bool
}

// StoredMeta is what deletes need from a stored object.
type StoredMeta struct {
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
	// ErrGraceful tells delete's check that the object must be marked for deletion rather than removed.
	ErrGraceful = errors.New("object has finalizers")
	// errDeleteNow tells a marking that the object has no finalizer left to wait for, so it goes now.
	errDeleteNow = errors.New("object has no finalizers")
)

// DeleteResult is what a DELETE of one object answers.
type DeleteResult struct {
	// Body is the JSON answer: a Status, or an object.
	Body []byte
	// Object is the stored object the body shows, for the answers that show one; nil for a Status
	// and for the empty object of a dry run (dryRunDelete).
	Object *storage.KeyValue
	// Status is set when body is a Status.
	Status bool
	// Pending is set when the object stays, marked for deletion, until its finalizers are removed.
	Pending bool
}

// ObjectResult answers with the stored object kv at the route's version.
func (s *Store) ObjectResult(kv storage.KeyValue, pending bool) (DeleteResult, error) {
	body, err := s.Respond(kv)
	return DeleteResult{Body: body, Object: &kv, Pending: pending}, err
}

// DeleteObject deletes an object as kube's generic registry store does (its Delete): the garbage
// collector's finalizers are set as the options ask (deletepolicy.go); an object left with finalizers
// (a namespace always has some, and a CRD's first delete starts its cleanup) is marked with a
// deletionTimestamp and stays until whoever owns them removes them; one without is removed.
func (s *Store) DeleteObject(ctx context.Context, namespace, name string, opts *DeleteOptions) (DeleteResult, error) {
	key := s.Key(namespace, name)
	if opts.IsDryRun {
		return s.dryRunDelete(ctx, key, namespace, name, opts)
	}
	for attempt := 0; ; attempt++ {
		kv, err := s.Backend.Delete(ctx, key, func(current storage.KeyValue) error {
			m, err := s.vetDelete(ctx, current, namespace, name, opts)
			if err != nil {
				return err
			}
			mark, err := s.mustMark(current, m, &opts.DeleteOptions)
			if err != nil {
				return err
			}
			if mark {
				return ErrGraceful
			}
			return nil
		})
		if errors.Is(err, ErrGraceful) {
			kv, err = s.markForDeletion(ctx, key, opts)
			if errors.Is(err, errDeleteNow) && attempt < 3 {
				continue // the finalizers went meanwhile: delete it after all
			}
			if err != nil {
				return DeleteResult{}, APIError(err, s.GR, name)
			}
			return s.ObjectResult(kv, true)
		}
		if err != nil {
			return DeleteResult{}, APIError(err, s.GR, name)
		}
		return s.removed(kv, name)
	}
}

// vetDelete reads what a delete needs from the stored object and checks, as kube's store does before
// it deletes, that the object converts, that the preconditions hold and that admission allows it.
func (s *Store) vetDelete(ctx context.Context, current storage.KeyValue, namespace, name string, opts *DeleteOptions) (*StoredMeta, error) {
	var m StoredMeta
	if err := json.Unmarshal(current.Value, &m); err != nil {
		return nil, fmt.Errorf("reading stored %s: %w", current.Key, err)
	}
	if err := s.CheckConvertible(current); err != nil {
		return nil, err
	}
	if err := checkPreconditions(opts.Preconditions, m.Metadata.UID, current.ModRevision); err != nil {
		// kube's BeforeDelete names the kind, not the resource, in this conflict.
		return nil, apierrors.NewConflict(schema.GroupResource{Group: s.GR.Group, Resource: s.Strategy.GVK.Kind}, name, err)
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
func (s *Store) mustMark(current storage.KeyValue, m *StoredMeta, o *metav1.DeleteOptions) (bool, error) {
	if dm := s.Strategy.DeleteMarker(); dm != nil {
		obj, err := s.DecodeStored(current)
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
func (s *Store) gcPolicy() GCPolicy { return s.Strategy.StoreRules().DeletePolicy }

// removed is the answer to a delete that removed the object kv held: a Success Status naming it,
// or the object for the kinds whose kube storage returns it.
func (s *Store) removed(kv storage.KeyValue, name string) (DeleteResult, error) {
	if s.Strategy.StoreRules().ReturnDeletedObject {
		return s.ObjectResult(kv, false)
	}
	var m StoredMeta
	_ = json.Unmarshal(kv.Value, &m)
	body, err := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: name, Group: s.GR.Group, Kind: s.GR.Resource, UID: m.Metadata.UID},
	})
	return DeleteResult{Body: body, Status: true}, err
}

// dryRunDelete answers a dry-run DELETE with what the delete would answer, writing nothing.
func (s *Store) dryRunDelete(ctx context.Context, key, namespace, name string, opts *DeleteOptions) (DeleteResult, error) {
	current, err := s.Backend.Get(ctx, key, storage.GetOptions{})
	if err != nil {
		return DeleteResult{}, APIError(err, s.GR, name)
	}
	m, err := s.vetDelete(ctx, current, namespace, name, opts)
	if err != nil {
		return DeleteResult{}, APIError(err, s.GR, name)
	}
	mark, err := s.mustMark(current, m, &opts.DeleteOptions)
	if err != nil {
		return DeleteResult{}, APIError(err, s.GR, name)
	}
	if !mark {
		if len(m.Metadata.Finalizers) > 0 {
			// kube takes its update path for an object whose finalizers the delete removes, and a dry
			// run of it answers with the store's empty object.
			body, err := s.emptyObject()
			return DeleteResult{Body: body}, err
		}
		return s.removed(current, name)
	}
	obj, err := s.DecodeStored(current)
	if err != nil {
		return DeleteResult{}, APIError(err, s.GR, name)
	}
	changed, err := s.applyDeletion(obj, &opts.DeleteOptions, metav1.NewTime(s.env.Now().UTC()))
	if err != nil {
		return DeleteResult{}, APIError(err, s.GR, name)
	}
	if changed {
		value, err := s.Encode(obj)
		if err != nil {
			return DeleteResult{}, APIError(err, s.GR, name)
		}
		current.Value, current.RVAt, current.RVLast = value, 0, false
	}
	return s.ObjectResult(current, true)
}

// emptyObject is a new object of the scope's kind with nothing set, as kube's store's New encodes.
func (s *Store) emptyObject() ([]byte, error) {
	gvk := s.Strategy.GVK
	if s.Res.Custom {
		return json.Marshal(map[string]any{"apiVersion": s.GVR.GroupVersion().String(), "kind": gvk.Kind})
	}
	return json.Marshal(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String()}})
}

// markDeleted marks an object with finalizers for deletion, leaving its finalizers as they are (the
// namespace controller's deletes); one whose finalizers went meanwhile is removed.
func (s *Store) MarkDeleted(ctx context.Context, key string) (storage.KeyValue, error) {
	kv, err := s.markForDeletion(ctx, key, nil)
	if !errors.Is(err, errDeleteNow) {
		return kv, err
	}
	kv, err = s.Backend.Delete(ctx, key, func(current storage.KeyValue) error {
		var m StoredMeta
		if err := json.Unmarshal(current.Value, &m); err != nil {
			return fmt.Errorf("reading stored %s: %w", key, err)
		}
		if len(m.Metadata.Finalizers) > 0 {
			return ErrGraceful // finalizers came back: leave it to its next delete
		}
		return nil
	})
	if errors.Is(err, ErrGraceful) {
		return kv, nil
	}
	return kv, err
}

// markForDeletion marks an object for deletion as a delete with opts does (nil opts change no
// finalizer) and returns it as stored; errDeleteNow when it turns out to have no finalizer to wait
// for. The object is decoded and encoded as the scope's kind, so a custom resource's integers keep
// every digit.
func (s *Store) markForDeletion(ctx context.Context, key string, opts *DeleteOptions) (storage.KeyValue, error) {
	now := metav1.NewTime(s.env.Now().UTC())
	var o *metav1.DeleteOptions
	if opts != nil {
		o = &opts.DeleteOptions
	}
	var name string
	kv, err := s.Backend.GuaranteedUpdate(ctx, key, func(current storage.KeyValue) ([]byte, error) {
		obj, err := s.DecodeStored(current)
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
				return nil, apierrors.NewConflict(schema.GroupResource{Group: s.GR.Group, Resource: s.Strategy.GVK.Kind}, name, err)
			}
		}
		changed, err := s.applyDeletion(obj, o, now)
		if err != nil || !changed {
			return current.Value, err
		}
		return s.Encode(obj)
	}, storage.UpdateOptions{})
	if err != nil {
		return kv, err
	}
	if s.GR == namespacesResource {
		s.env.NamespaceMarked(name, now.Time)
	}
	return kv, nil
}

// applyDeletion changes obj as a delete with o marks it, at now, and reports whether anything
// changed; errDeleteNow when no finalizer is left to wait for. It follows kube's stores: a kind with
// rules of its own marks by them (kinds.DeleteMarker; kube's namespace and CRD storage set no grace
// period, only the deletionTimestamp on the first delete); every other delete sets the garbage
// collector's finalizers (deletionFinalizersForGarbageCollection) and marks the object
// (markAsDeleting: deletionTimestamp, deletionGracePeriodSeconds 0, and the generation bumped once).
func (s *Store) applyDeletion(obj runtime.Object, o *metav1.DeleteOptions, now metav1.Time) (bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, err
	}
	first := m.GetDeletionTimestamp() == nil
	if dm := s.Strategy.DeleteMarker(); dm != nil {
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

// FinishIfFinalized removes an object whose deletion was pending once its last finalizer is gone, as
// kube's store does after such an update; it returns the object as last stored.
func (s *Store) FinishIfFinalized(ctx context.Context, key string, kv storage.KeyValue) (storage.KeyValue, error) {
	if !MayBeTerminating(kv.Value) {
		return kv, nil // the common case, found without decoding: no deletion pending
	}
	var m StoredMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return kv, err
	}
	if m.Metadata.DeletionTimestamp == nil || len(m.Metadata.Finalizers) > 0 || len(m.Spec.Finalizers) > 0 {
		return kv, nil
	}
	return kv, s.DeleteAtRevision(ctx, key, kv.ModRevision)
}

// deleteAtRevision deletes key if it is still at revision rev. An object changed since is left to
// whoever changed it, and one already gone is no error.
func (s *Store) DeleteAtRevision(ctx context.Context, key string, rev int64) error {
	_, err := s.Backend.Delete(ctx, key, func(current storage.KeyValue) error {
		if current.ModRevision != rev {
			return ErrGraceful // changed since: whoever changed it decides
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrGraceful) && !storage.IsNotFound(err) {
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

// admitDelete runs admission on the delete of the stored object current, as kube's store does once
// the preconditions hold: both phases, with the object as the old object and none as the new.
func (s *Store) admitDelete(ctx context.Context, current storage.KeyValue, namespace, name string, opts *DeleteOptions) error {
	if s.env.Admission() == nil {
		return nil
	}
	old, err := s.DecodeStored(current)
	if err != nil {
		return err
	}
	admName := name
	if opts.Collection {
		admName = ""
	}
	return s.StartAdmission(ctx, kadmission.Delete, nil, old, namespace, admName, deleteOptionsObject(opts), opts.IsDryRun).Admit(ctx)
}

var namespacesResource = corev1.Resource("namespaces")
