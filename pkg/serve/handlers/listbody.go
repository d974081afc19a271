package handlers

import (
	"bytes"
	"strconv"

	"github.com/apictl/apictl/pkg/storage"
)

// writeList encodes a page of stored objects as kube's encoders write a list, for LIST and for the
// answer of a deletecollection. A built-in kind's list is a typed <Kind>List: kind, apiVersion,
// ListMeta in its field order, and items without kind and apiVersion. A custom resource's list is
// unstructured JSON: keys sorted, and metadata.continue present even when empty.
//
// This is the LIST fast path, kept by hand rather than through apimachinery's encoders: the stored
// bytes are spliced into the buffer with their resourceVersion, nothing is decoded, and nothing is
// allocated per item (BenchmarkListConfigMaps).
func (s *scope) writeList(buf *bytes.Buffer, res *storage.ListResult) error {
	if !s.res.Custom {
		buf.WriteString(`{"kind":"`)
		buf.WriteString(s.listKind)
		buf.WriteString(`","apiVersion":"`)
		buf.WriteString(s.gvr.GroupVersion().String())
		buf.WriteString(`","metadata":`)
		writeListMeta(buf, res, false)
		buf.WriteString(`,"items":`)
		if err := s.writeItems(buf, res.Items, true); err != nil {
			return err
		}
		buf.WriteByte('}')
		return nil
	}
	buf.WriteString(`{"apiVersion":"`)
	buf.WriteString(s.gvr.GroupVersion().String())
	buf.WriteString(`","items":`)
	if err := s.writeItems(buf, res.Items, false); err != nil {
		return err
	}
	buf.WriteString(`,"kind":"`)
	buf.WriteString(s.listKind)
	buf.WriteString(`","metadata":`)
	writeListMeta(buf, res, true)
	buf.WriteByte('}')
	return nil
}

// writeListMeta writes a list's metadata: in ListMeta's field order, or, for unstructured lists,
// sorted and with continue even when empty.
func writeListMeta(buf *bytes.Buffer, res *storage.ListResult, unstructured bool) {
	var num [20]byte
	if unstructured {
		buf.WriteString(`{"continue":`)
		buf.Write(strconv.AppendQuote(num[:0], res.Continue))
		if res.RemainingItemCount != nil {
			buf.WriteString(`,"remainingItemCount":`)
			buf.Write(strconv.AppendInt(num[:0], *res.RemainingItemCount, 10))
		}
		buf.WriteString(`,"resourceVersion":"`)
		buf.Write(strconv.AppendInt(num[:0], res.Revision, 10))
		buf.WriteString(`"}`)
		return
	}
	buf.WriteString(`{"resourceVersion":"`)
	buf.Write(strconv.AppendInt(num[:0], res.Revision, 10))
	buf.WriteByte('"')
	if res.Continue != "" {
		buf.WriteString(`,"continue":`)
		buf.Write(strconv.AppendQuote(num[:0], res.Continue))
	}
	if res.RemainingItemCount != nil {
		buf.WriteString(`,"remainingItemCount":`)
		buf.Write(strconv.AppendInt(num[:0], *res.RemainingItemCount, 10))
	}
	buf.WriteByte('}')
}

// writeItems writes stored objects as a JSON array with their resourceVersions, without their kind
// and apiVersion when bare is set (a built-in list's items, as kube's encoder writes them).
func (s *scope) writeItems(buf *bytes.Buffer, items []storage.KeyValue, bare bool) error {
	buf.WriteByte('[')
	for i, kv := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Grow(len(kv.Value) + 32)
		// Spliced straight into the buffer's spare capacity: no copy of the object but the one into buf.
		item, err := storage.AppendWithResourceVersion(buf.AvailableBuffer(), kv)
		if err != nil {
			return err
		}
		if bare && bytes.HasPrefix(item, s.itemTypeMeta) {
			// Keep the object's '{' in place of the comma that ends its type meta; buf.Write then
			// moves the rest down within the same memory.
			item = item[len(s.itemTypeMeta)-1:]
			item[0] = '{'
		}
		buf.Write(item)
	}
	buf.WriteByte(']')
	return nil
}
