package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/metajson"
	"github.com/apictl/apictl/pkg/storage"
)

// The metadata-only representations, asked for with Accept: application/json;as=<kind>;g=meta.k8s.io;
// v=v1 (or v1beta1). client-go's metadata client and informers, controller-runtime's metadata watches
// and garbage collectors read objects this way.
const (
	partialObject     = "PartialObjectMetadata"
	partialObjectList = "PartialObjectMetadataList"
)

// storedObjectMeta is the part of a stored object a PartialObjectMetadata keeps.
type storedObjectMeta struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
}

// partialMetadata returns a stored object's metadata as kube's meta.AsPartialObjectMetadata makes it,
// with its resourceVersion, as PartialObjectMetadata of meta.k8s.io at version.
func partialMetadata(kv storage.KeyValue, version string) (*metav1.PartialObjectMetadata, error) {
	var m storedObjectMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		return nil, fmt.Errorf("reading the metadata of stored %s: %w", kv.Key, err)
	}
	m.Metadata.ResourceVersion = strconv.FormatInt(kv.ModRevision, 10)
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{Kind: partialObject, APIVersion: metav1.GroupName + "/" + version},
		ObjectMeta: m.Metadata,
	}, nil
}

// partialBody is the answer to a read of one object in the negotiated metadata representation, or
// kube's 406 when a list was asked for.
func (s *scope) partialBody(out output, kv storage.KeyValue) ([]byte, error) {
	if out.partial != partialObject {
		return nil, s.shape.notAList(s)
	}
	return s.appendPartial(nil, kv, out.partialVersion)
}

// writePartialList encodes a page as PartialObjectMetadataList, or fails with kube's 406 when a single
// object's representation was asked for. Like kube's, an empty list has "items":null.
func (s *scope) writePartialList(buf *bytes.Buffer, out output, res *storage.ListResult, flush func(*bytes.Buffer) error) error {
	enc, err := s.partialList(out, res)
	if err != nil {
		return err
	}
	return encodeList(buf, enc, res, flush)
}

// partialList is the listEncoder of PartialObjectMetadataList, or kube's 406 when a single object's
// representation was asked for.
func (s *scope) partialList(out output, res *storage.ListResult) (*partialListEncoder, error) {
	if out.partial != partialObjectList {
		return nil, partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is a list (%s)", partialObject, s.internalTypeName(true)))
	}
	return &partialListEncoder{s: s, res: res, version: out.partialVersion}, nil
}

type partialListEncoder struct {
	s       *scope
	res     *storage.ListResult
	version string
	scratch []byte
}

func (l *partialListEncoder) head(buf *bytes.Buffer) {
	buf.WriteString(`{"kind":"`)
	buf.WriteString(partialObjectList)
	buf.WriteString(`","apiVersion":"`)
	buf.WriteString(metav1.GroupName + "/" + l.version)
	buf.WriteString(`","metadata":`)
	writeListMeta(buf, l.res, false)
	buf.WriteString(`,"items":`)
}

func (l *partialListEncoder) item(buf *bytes.Buffer, kv storage.KeyValue) error {
	var err error
	if l.scratch, err = l.s.appendPartial(l.scratch[:0], kv, l.version); err != nil {
		return err
	}
	buf.Write(l.scratch)
	return nil
}

func (*partialListEncoder) tail(buf *bytes.Buffer) { buf.WriteByte('}') }
func (*partialListEncoder) emptyItems() string     { return "null" }

// appendPartial appends a stored object's PartialObjectMetadata at version to dst. A built-in
// object is stored as its Go type encodes it, so its metadata is already ObjectMeta's JSON: it is
// copied out with its resourceVersion spliced in, without decoding. A custom resource's, stored with
// sorted keys, is written in ObjectMeta's order, as kube's decoding and encoding write it.
func (s *scope) appendPartial(dst []byte, kv storage.KeyValue, version string) ([]byte, error) {
	if out, ok, err := s.shape.appendStoredPartial(dst, s, kv, version); ok || err != nil {
		return out, err
	}
	// A custom resource's (stored with sorted keys) is written in ObjectMeta's order from the stored
	// JSON when its metadata is plain, the bytes decoding and encoding would give (metajson).
	var m metajson.Meta
	if m.Read(kv.Value) {
		start := len(dst)
		dst = appendPartialHead(dst, version)
		if out, ok := m.Append(dst, kv.ModRevision); ok {
			return append(out, '}'), nil
		}
		dst = dst[:start]
	}
	p, err := partialMetadata(kv, version)
	if err != nil {
		return dst, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendPartialHead writes a PartialObjectMetadata at version up to its metadata's value, in parts:
// joining version in would allocate for every item of a LIST.
func appendPartialHead(dst []byte, version string) []byte {
	dst = append(dst, `{"kind":"`+partialObject+`","apiVersion":"`+metav1.GroupName+"/"...)
	dst = append(dst, version...)
	return append(dst, `","metadata":`...)
}

// storedMetadata returns the metadata object of a stored built-in object that begins with typeMeta
// (`{"kind":"K","apiVersion":"V",`, as its Go type encodes it) and then its metadata; false when it
// does not.
func storedMetadata(value, typeMeta []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(value, typeMeta)
	if !ok {
		return nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`"metadata":`)); !ok {
		return nil, false
	}
	if n := jsonObjectEnd(rest); n > 0 {
		return rest[:n], true
	}
	return nil, false
}

// jsonObjectEnd returns the length of the JSON object b starts with, or -1 when b does not start
// with a complete one. It matches braces and brackets outside strings and trusts the JSON to be
// valid, as stored values are.
func jsonObjectEnd(b []byte) int {
	if len(b) == 0 || b[0] != '{' {
		return -1
	}
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte is never a quote that ends the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// internalTypeName names the Go type of the resource's objects (or lists) in kube's server, as its
// 406 messages do: *core.ConfigMap, *rbac.RoleList, *unstructured.Unstructured.
func (s *scope) internalTypeName(list bool) string { return s.shape.internalTypeName(s, list) }

// typedTypeName is internalTypeName of a built-in kind.
func typedTypeName(s *scope, list bool) string {
	pkg, _, _ := strings.Cut(s.GVR.Group, ".")
	if pkg == "" {
		pkg = "core"
	}
	kind := s.ObjectGVK.Kind
	if list {
		kind += "List"
	}
	return "*" + pkg + "." + kind
}

// partialNotAcceptable is kube's 406 for a metadata representation that does not fit the route.
func partialNotAcceptable(message string) error {
	return statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, message)
}

// partialBookmark is the object of a BOOKMARK event in the metadata representation: kube converts
// the kind's empty object, which has only a resourceVersion (and the end of the initial events).
func partialBookmark(version, resourceVersion string, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{Kind: partialObject, APIVersion: metav1.GroupName + "/" + version},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: resourceVersion, Annotations: annotations},
	}
}
