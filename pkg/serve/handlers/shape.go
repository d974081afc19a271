package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/registry/crschema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/storage"
)

// shape is how a route's objects look on the wire, chosen once when the route is installed: a
// built-in kind's (typedShape), whose Go type kube encodes and negotiates through go-restful, or a
// custom resource's (unstructuredShape), which kube serves as unstructured objects outside go-restful.
type shape interface {
	// checksRouteMedia reports whether the route's media types are checked before its handler runs:
	// kube's custom resource handlers negotiate alone.
	checksRouteMedia() bool
	// listHead and listTail write a list's members around its items, in the order kube's encoding
	// of the list type writes them.
	listHead(buf *bytes.Buffer, s *scope, res *storage.ListResult)
	listTail(buf *bytes.Buffer, s *scope, res *storage.ListResult)
	// listItem returns a stored object as the list's item.
	listItem(s *scope, item []byte) []byte
	// notAList is kube's answer to a PartialObjectMetadataList asked of one object.
	notAList(s *scope) error
	// appendStoredPartial appends the PartialObjectMetadata of a stored object straight from its
	// bytes, or reports false for appendPartial's general way.
	appendStoredPartial(dst []byte, s *scope, kv storage.KeyValue, version string) ([]byte, bool, error)
	// internalTypeName names the Go type of the objects (or lists) in kube's server, as its 406s do.
	internalTypeName(s *scope, list bool) string
	// decodeJSON decodes a JSON body into a new object of the route's kind, handling unknown and
	// duplicate fields per validation (the fieldValidation directive).
	decodeJSON(s *scope, body []byte, validation string) (runtime.Object, []string, error)
	// patchDecoder returns how the patcher decodes the object a JSON or merge patch produced, before
	// its field manager records the write; nil when it needs no second decoding.
	patchDecoder(s *scope, validation string) func(runtime.Object) (runtime.Object, []string, error)
	// afterPatch returns the object a patch made, as it goes on to the update's rules.
	afterPatch(s *scope, res *patch.Result, typ types.PatchType) runtime.Object
}

// typedShape is a built-in kind's.
type typedShape struct{}

func (typedShape) checksRouteMedia() bool { return true }

func (typedShape) listHead(buf *bytes.Buffer, s *scope, res *storage.ListResult) {
	buf.WriteString(`{"kind":"`)
	buf.WriteString(s.listKind)
	buf.WriteString(`","apiVersion":"`)
	buf.WriteString(s.GVR.GroupVersion().String())
	buf.WriteString(`","metadata":`)
	writeListMeta(buf, res, false)
	buf.WriteString(`,"items":`)
}

func (typedShape) listTail(buf *bytes.Buffer, _ *scope, _ *storage.ListResult) { buf.WriteByte('}') }

// listItem drops the item's kind and apiVersion, as kube's typed lists leave them out.
func (typedShape) listItem(s *scope, item []byte) []byte {
	if bytes.HasPrefix(item, s.itemTypeMeta) {
		// Keep the object's '{' in place of the comma that ends its type meta; buf.Write then
		// moves the rest down within the same memory.
		item = item[len(s.itemTypeMeta)-1:]
		item[0] = '{'
	}
	return item
}

func (typedShape) notAList(s *scope) error {
	return partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", partialObjectList, s.internalTypeName(false)))
}

// appendStoredPartial copies out a built-in object's metadata, which is stored as its Go type
// encodes it and so is already ObjectMeta's JSON, with its resourceVersion spliced in. The object is
// spliced into dst's spare room after the head, and its metadata moved down over it: a LIST reuses
// dst, so an item costs no allocation.
func (typedShape) appendStoredPartial(dst []byte, s *scope, kv storage.KeyValue, version string) ([]byte, bool, error) {
	start := len(dst)
	dst = appendPartialHead(dst, version)
	obj, err := storage.AppendWithResourceVersion(dst[len(dst):], kv)
	if err != nil {
		return dst[:start], false, err
	}
	meta, ok := storedMetadata(obj, s.itemTypeMeta)
	if !ok {
		return dst[:start], false, nil
	}
	dst = append(dst, meta...) // copy's memmove: meta may lie in dst's spare room, ahead of its end
	return append(dst, '}'), true, nil
}

func (typedShape) internalTypeName(s *scope, list bool) string { return typedTypeName(s, list) }

// decodeJSON defaults a built-in kind's apiVersion and kind to the route's, as kube's decoder does
// with the endpoint's kind as the default.
func (typedShape) decodeJSON(s *scope, body []byte, validation string) (runtime.Object, []string, error) {
	return s.decodeTyped(body, validation)
}

func (typedShape) patchDecoder(*scope, string) func(runtime.Object) (runtime.Object, []string, error) {
	return nil
}

func (typedShape) afterPatch(_ *scope, res *patch.Result, _ types.PatchType) runtime.Object {
	return res.Object
}

// unstructuredShape is a custom resource's; crv is its schema, nil only for a resource that has
// none, whose objects are decoded as they come.
type unstructuredShape struct{ crv *crschema.Validator }

func (unstructuredShape) checksRouteMedia() bool { return false }

func (unstructuredShape) listHead(buf *bytes.Buffer, s *scope, _ *storage.ListResult) {
	buf.WriteString(`{"apiVersion":"`)
	buf.WriteString(s.GVR.GroupVersion().String())
	buf.WriteString(`","items":`)
}

// listTail writes kind and metadata after the items, in the sorted order of an unstructured list.
func (unstructuredShape) listTail(buf *bytes.Buffer, s *scope, res *storage.ListResult) {
	buf.WriteString(`,"kind":"`)
	buf.WriteString(s.listKind)
	buf.WriteString(`","metadata":`)
	writeListMeta(buf, res, true)
	buf.WriteByte('}')
}

func (unstructuredShape) listItem(_ *scope, item []byte) []byte { return item }

// notAList: kube's unstructured object passes its list check, and then fails to be walked as a list.
func (unstructuredShape) notAList(*scope) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: "content is not a list"}}
}

// appendStoredPartial declines: a custom resource is stored with sorted keys, not ObjectMeta's order.
func (unstructuredShape) appendStoredPartial(dst []byte, _ *scope, _ storage.KeyValue, _ string) ([]byte, bool, error) {
	return dst, false, nil
}

func (unstructuredShape) internalTypeName(_ *scope, list bool) string {
	if list {
		return "*unstructured.UnstructuredList"
	}
	return "*unstructured.Unstructured"
}

// decodeJSON decodes through the CRD's schema, which prunes unknown fields (reporting them per
// fieldValidation) and applies defaults, and checks apiVersion and kind with the messages of kube's
// unstructured decoder: a custom resource must name its kind.
func (u unstructuredShape) decodeJSON(s *scope, body []byte, validation string) (runtime.Object, []string, error) {
	if u.crv == nil {
		return s.decodeTyped(body, validation)
	}
	obj, warnings, err := u.crv.DecodeBody(body, validation)
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// patchDecoder decodes a patched custom resource through the CRD's schema, as kube's decoder does,
// so unknown fields are pruned (reported per validation) and defaults applied. A patch that removes
// a defaulted field thus gets it back, owned by the patcher, as in kube.
func (u unstructuredShape) patchDecoder(_ *scope, validation string) func(runtime.Object) (runtime.Object, []string, error) {
	if u.crv == nil {
		return nil
	}
	crv := u.crv
	return func(obj runtime.Object) (runtime.Object, []string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil, nil
		}
		patched, err := json.Marshal(u.Object)
		if err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		return crv.DecodePatched(patched, nil, validation)
	}
}

// afterPatch applies the schema's defaults to the result of an apply, as kube's field manager does
// after the apply: CEL rules such as the Gateway API's read defaulted fields. The other patches went
// through the schema before their field manager ran (patchDecoder).
func (u unstructuredShape) afterPatch(_ *scope, res *patch.Result, typ types.PatchType) runtime.Object {
	obj, ok := res.Object.(*unstructured.Unstructured)
	if !ok || u.crv == nil || typ != types.ApplyPatchType {
		return res.Object
	}
	u.crv.Default(obj)
	return obj
}
