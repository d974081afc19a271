package handlers

import (
	"bytes"
	"fmt"

	"github.com/apictl/apictl/pkg/jsonyaml"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// listEncoder is one representation of a list, written as JSON in three parts: what comes before
// the items' array, each item, and what comes after it. encodeList joins them as the whole body's
// encoder would, and hands the body on in chunks as it grows, so that every representation of a LIST
// streams (issue 38): compact and indented JSON, YAML, Table and PartialObjectMetadataList.
type listEncoder interface {
	// head writes the list up to its items' array: `{"kind":...,"items":`.
	head(buf *bytes.Buffer)
	// item writes one item, without separators.
	item(buf *bytes.Buffer, kv storage.KeyValue) error
	// tail writes what follows the items' array, to the list's end.
	tail(buf *bytes.Buffer)
	// emptyItems is the array of a list with no item: `[]`, or `null` where kube's encoder writes
	// a nil slice.
	emptyItems() string
}

// encodeList writes a list as enc's JSON, handing buf to flush (when set) whenever it holds a chunk.
func encodeList(buf *bytes.Buffer, enc listEncoder, res *storage.ListResult, flush func(*bytes.Buffer) error) error {
	enc.head(buf)
	n := 0
	err := store.EachItem(res, func(kv storage.KeyValue) error {
		if n == 0 {
			buf.WriteByte('[')
		} else {
			buf.WriteByte(',')
		}
		n++
		if err := enc.item(buf, kv); err != nil {
			return err
		}
		return flushFull(buf, flush)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		buf.WriteString(enc.emptyItems())
	} else {
		buf.WriteByte(']')
	}
	enc.tail(buf)
	return nil
}

// flushFull hands buf to flush (when set) once it holds a chunk.
func flushFull(buf *bytes.Buffer, flush func(*bytes.Buffer) error) error {
	if flush != nil && buf.Len() >= listChunkBytes {
		return flush(buf)
	}
	return nil
}

// yamlList writes a list as YAML, item by item: the YAML of the whole JSON list (sigs.k8s.io/yaml's
// JSONToYAML, as writeJSON converts a body) in the same bytes, without the whole list in memory and,
// for most items, without decoding them (jsonyaml.Writer).
//
// It relies on two facts of that conversion: the list's keys are sorted and its items' array is a
// top-level sequence, which the YAML encoder writes without indenting it under its key; and an item's
// YAML depends only on where it sits, so the YAML of {"items":[item]} without its first line is the
// item as the whole list's YAML has it.
type yamlList struct {
	enc listEncoder
	// before and after are the list's YAML around its items, before ending with the items' key.
	before, after []byte
	scratch       bytes.Buffer
	// writer writes most items' YAML straight from their JSON; the rest are converted.
	writer jsonyaml.Writer
}

// itemsPlaceholder stands for the items in the frame converted once: a string no list metadata holds.
const itemsPlaceholder = "apictl-list-items-go-here"

func newYAMLList(enc listEncoder) (*yamlList, error) {
	y := &yamlList{enc: enc}
	var frame bytes.Buffer
	enc.head(&frame)
	frame.WriteString(`"` + itemsPlaceholder + `"`)
	enc.tail(&frame)
	out, err := jsonyaml.Convert(frame.Bytes())
	if err != nil {
		return nil, fmt.Errorf("converting the list to YAML: %w", err)
	}
	before, after, ok := bytes.Cut(out, []byte(": "+itemsPlaceholder+"\n"))
	if !ok {
		return nil, fmt.Errorf("converting the list to YAML: its items' place is not in %q", out)
	}
	y.before, y.after = before, after
	return y, nil
}

// encode writes the list's YAML to buf, handing it to flush (when set) whenever it holds a chunk.
func (y *yamlList) encode(buf *bytes.Buffer, res *storage.ListResult, flush func(*bytes.Buffer) error) error {
	buf.Write(y.before)
	n := 0
	err := store.EachItem(res, func(kv storage.KeyValue) error {
		if n == 0 {
			buf.WriteString(":\n")
		}
		n++
		y.scratch.Reset()
		y.scratch.WriteString(`{"items":[`)
		if err := y.enc.item(&y.scratch, kv); err != nil {
			return err
		}
		y.scratch.WriteString(`]}`)
		j := y.scratch.Bytes()
		if out, ok := y.writer.AppendItem(buf.AvailableBuffer(), j[len(`{"items":[`):len(j)-len(`]}`)]); ok {
			buf.Write(out)
			return flushFull(buf, flush)
		}
		out, err := jsonyaml.Convert(j)
		if err != nil {
			return fmt.Errorf("converting a list item to YAML: %w", err)
		}
		_, item, _ := bytes.Cut(out, []byte("\n")) // "items:\n" goes
		buf.Write(item)
		return flushFull(buf, flush)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		empty, err := jsonyaml.Convert([]byte(`{"items":` + y.enc.emptyItems() + `}`))
		if err != nil {
			return fmt.Errorf("converting the list to YAML: %w", err)
		}
		buf.Write(bytes.TrimPrefix(empty, []byte("items")))
	}
	buf.Write(y.after)
	return nil
}

// objectList is a list of the resource's own objects: a built-in kind's typed <Kind>List, its
// items without kind and apiVersion, or a custom resource's unstructured list (keys sorted, and
// metadata.continue present even when empty).
//
// This is the LIST fast path, kept by hand rather than through apimachinery's encoders: the stored
// bytes are spliced into the buffer with their resourceVersion, nothing is decoded, and nothing is
// allocated per item (BenchmarkListConfigMaps).
type objectList struct {
	s   *scope
	res *storage.ListResult
}

func (l objectList) head(buf *bytes.Buffer) { l.s.shape.listHead(buf, l.s, l.res) }

func (l objectList) tail(buf *bytes.Buffer) { l.s.shape.listTail(buf, l.s, l.res) }

func (objectList) emptyItems() string { return "[]" }

func (l objectList) item(buf *bytes.Buffer, kv storage.KeyValue) error {
	buf.Grow(len(kv.Value) + 32)
	// Spliced straight into the buffer's spare capacity: no copy of the object but the one into buf.
	item, err := storage.AppendWithResourceVersion(buf.AvailableBuffer(), kv)
	if err != nil {
		return err
	}
	buf.Write(l.s.shape.listItem(l.s, item))
	return nil
}
