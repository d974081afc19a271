package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/status"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// get answers GET of one object (and of its status subresource, which is the whole object, as in kube).
func (s *scope) get(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, kv, ok := s.getStored(w, r, p, s.readConversions())
	if !ok {
		return
	}
	var body []byte
	var err error
	switch {
	case out.partial != "":
		body, err = s.partialBody(out, kv)
	case out.format == formatTable:
		body, err = s.tableOf(r, out, kv)
	default:
		if writeStoredJSON(w, r, out.format, kv) {
			return
		}
		body, err = storage.AppendWithResourceVersion(nil, kv) // getStored converted it
	}
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return
	}
	writeJSON(w, r, http.StatusOK, out.format, body)
}

// getStored negotiates a GET's response and reads the object; on a problem it answers with the error
// and returns false.
func (s *scope) getStored(w http.ResponseWriter, r *http.Request, p routes.Params, allow conversions) (output, storage.KeyValue, bool) {
	out, err := negotiateOutput(r.Header.Get("Accept"), allow)
	if err != nil {
		writeError(w, r, err)
		return out, storage.KeyValue{}, false
	}
	rv := r.URL.Query().Get("resourceVersion")
	if err := checkResourceVersion(rv, false); err != nil {
		writeError(w, r, err)
		return out, storage.KeyValue{}, false
	}
	kv, err := s.Backend.Get(r.Context(), s.Key(p.Namespace, p.Name), storage.GetOptions{ResourceVersion: rv})
	if err == nil {
		kv, err = s.store.Readable(kv) // at the route's version: a no-op but for CRDs with several versions
	}
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return out, kv, false
	}
	return out, kv, true
}

// list answers LIST: the stored objects, streamed as they are with their resourceVersions spliced in.
func (s *scope) list(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, err := negotiateOutput(r.Header.Get("Accept"), s.readConversions())
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseListOptions(r.URL.Query())
	if err == nil {
		err = s.fields.check(opts.fields)
	}
	if err == nil {
		err = opts.checkResourceVersion()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Every representation streams (listencode.go): the list is written and sent in chunks, a chunk
	// at a time in memory, whatever its size.
	stream := &listStream{w: w, ctx: r.Context(), seats: s.api.listSeats, contentType: mediaJSON}
	switch {
	case out.format == formatYAML:
		stream.contentType = mediaYAML
	case status.Pretty(r):
		stream.indent = &jsonIndenter{}
	}
	stream.converts = out.format != formatJSON || out.partial != "" || s.Conv != nil
	defer stream.done()
	res, err := s.Backend.List(r.Context(), s.Prefix(p.Namespace), storage.ListOptions{
		ResourceVersion:      opts.resourceVersion,
		ResourceVersionMatch: opts.resourceVersionMatch,
		Limit:                opts.limit,
		Continue:             opts.continueToken,
		Filter:               s.fields.filter(opts.labels, opts.fields),
		Stream:               true,
	})
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, ""))
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	// At the route's version: a no-op but for CRDs with several versions and events.k8s.io's Events.
	res = s.store.ReadableStream(res)
	err = s.encodeListAs(buf, r, out, res, stream.flush)
	switch {
	case err != nil && stream.started:
		// The status is sent: a Status can no longer replace the body, so the connection is cut and
		// the client sees a truncated list, as with kube.
		s.api.cfg.Logger.Warn("LIST stopped after its first bytes: the connection is closed", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	case err != nil:
		writeError(w, r, store.APIError(err, s.GR, ""))
	case stream.started:
		stream.finish(buf)
	case out.format == formatYAML:
		writeBody(w, http.StatusOK, mediaYAML, false, buf.Bytes())
	default:
		writeJSON(w, r, http.StatusOK, formatJSON, buf.Bytes())
	}
}

// encodeListAs writes a page in the representation the client asked for (out), as JSON or YAML.
func (s *scope) encodeListAs(buf *bytes.Buffer, r *http.Request, out output, res *storage.ListResult, flush func(*bytes.Buffer) error) error {
	var enc listEncoder
	switch {
	case out.format == formatTable:
		t, err := s.tableList(r, out, res)
		if err != nil {
			return err
		}
		enc = t
	case out.partial != "":
		p, err := s.partialList(out, res)
		if err != nil {
			return err
		}
		enc = p
	default:
		enc = objectList{s: s, res: res}
	}
	if out.format != formatYAML {
		return encodeList(buf, enc, res, flush)
	}
	y, err := newYAMLList(enc)
	if err != nil {
		return err
	}
	return y.encode(buf, res, flush)
}

// tableList is the listEncoder of a page as a meta.k8s.io Table: each stored object decoded and made
// a row as the list is written.
func (s *scope) tableList(r *http.Request, out output, res *storage.ListResult) (*tableListEncoder, error) {
	opts, err := tables.ParseOptions(r.URL.Query())
	if err != nil {
		return nil, err
	}
	opts.Version = out.tableVersion
	b, err := s.table.NewBuilder(opts)
	if err != nil {
		return nil, err
	}
	t := &tableListEncoder{s: s, b: b}
	t.before, t.after, t.empty, err = b.ListFrame(metav1.ListMeta{
		ResourceVersion:    strconv.FormatInt(res.Revision, 10),
		Continue:           res.Continue,
		RemainingItemCount: res.RemainingItemCount,
	})
	return t, err
}

type tableListEncoder struct {
	s             *scope
	b             *tables.Builder
	before, after []byte
	empty         string
	scratch       []byte
}

func (t *tableListEncoder) head(buf *bytes.Buffer) { buf.Write(t.before) }
func (t *tableListEncoder) tail(buf *bytes.Buffer) { buf.Write(t.after) }
func (t *tableListEncoder) emptyItems() string     { return t.empty }

func (t *tableListEncoder) item(buf *bytes.Buffer, kv storage.KeyValue) error {
	if !t.s.store.Form.Converts(kv.Value) {
		// A custom resource's row straight from its stored JSON, when it is plain: the same bytes
		// without decoding the object (see AppendStoredRow).
		if row, ok := t.b.AppendStoredRow(buf.AvailableBuffer(), kv.Value, kv.ModRevision); ok {
			buf.Write(row)
			return nil
		}
	}
	obj, err := t.s.store.DecodeStored(kv)
	if err != nil {
		return err
	}
	if t.scratch, err = t.b.AppendRow(t.scratch[:0], obj); err != nil {
		return err
	}
	buf.Write(t.scratch)
	return nil
}

// tableOf renders a stored object as a meta.k8s.io Table, for a GET (a LIST's is tableList).
func (s *scope) tableOf(r *http.Request, out output, kv storage.KeyValue) ([]byte, error) {
	opts, err := tables.ParseOptions(r.URL.Query())
	if err != nil {
		return nil, err
	}
	opts.Version = out.tableVersion
	obj, err := s.store.DecodeStored(kv)
	if err != nil {
		return nil, err
	}
	t, err := s.table.Convert(obj, opts)
	if err != nil {
		return nil, err
	}
	return json.Marshal(t)
}
