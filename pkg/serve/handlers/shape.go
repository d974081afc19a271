package handlers

import (
	"bytes"
	"fmt"
	"net/http"

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
// encodes it and so is already ObjectMeta's JSON, with its resourceVersion spliced in.
func (typedShape) appendStoredPartial(dst []byte, s *scope, kv storage.KeyValue, version string) ([]byte, bool, error) {
	obj, err := storage.AppendWithResourceVersion(nil, kv)
	if err != nil {
		return dst, false, err
	}
	meta, ok := storedMetadata(obj, `{"kind":"`+s.ObjectGVK.Kind+`","apiVersion":"`+s.GVR.GroupVersion().String()+`","metadata":`)
	if !ok {
		return dst, false, nil
	}
	dst = append(dst, `{"kind":"`+partialObject+`","apiVersion":"`+metav1.GroupName+"/"+version+`","metadata":`...)
	dst = append(dst, meta...)
	return append(dst, '}'), true, nil
}

func (typedShape) internalTypeName(s *scope, list bool) string { return typedTypeName(s, list) }

// unstructuredShape is a custom resource's.
type unstructuredShape struct{}

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
