package handlers

import (
	"encoding/json"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/registry/tables"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/status"
	"github.com/apictl/apictl/pkg/storage"
)

// get answers GET of one object (and of its status subresource, which is the whole object, as in kube).
func (s *scope) get(w http.ResponseWriter, r *http.Request, p routes.Params) {
	if s.isScale() {
		s.getScale(w, r, p)
		return
	}
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
		body, err = s.tableOf(r, out, []storage.KeyValue{kv}, nil)
	default:
		if writeStoredJSON(w, r, out.format, kv) {
			return
		}
		body, err = respond(kv) // getStored converted it
	}
	if err != nil {
		writeError(w, r, apiError(err, s.gr, p.Name))
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
	kv, err := s.store.Get(r.Context(), s.key(p.Namespace, p.Name), storage.GetOptions{ResourceVersion: rv})
	if err == nil {
		kv, err = s.readable(kv) // at the route's version: a no-op but for CRDs with several versions
	}
	if err != nil {
		writeError(w, r, apiError(err, s.gr, p.Name))
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
		err = s.checkFieldSelector(opts.fields)
	}
	if err == nil {
		err = opts.checkResourceVersion()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Compact JSON, what clients ask for, streams; the other encodings transform the whole body.
	var stream *listStream
	if out.partial == "" && out.format == formatJSON && !status.Pretty(r) {
		stream = &listStream{w: w, ctx: r.Context(), seats: s.api.listSeats}
		defer stream.leave()
	}
	res, err := s.store.List(r.Context(), s.prefix(p.Namespace), storage.ListOptions{
		ResourceVersion:      opts.resourceVersion,
		ResourceVersionMatch: opts.resourceVersionMatch,
		Limit:                opts.limit,
		Continue:             opts.continueToken,
		Filter:               s.filter(opts.labels, opts.fields),
		// Items one at a time only where nothing but the list writer reads them.
		Stream: stream != nil && s.conv == nil && s.stored == nil,
	})
	if err == nil {
		res, err = s.readableList(res) // at the route's version: a no-op but for CRDs with several versions
	}
	if err != nil {
		writeError(w, r, apiError(err, s.gr, ""))
		return
	}
	if out.format == formatTable {
		body, err := s.tableOf(r, out, res.Items, res)
		if err != nil {
			writeError(w, r, apiError(err, s.gr, ""))
			return
		}
		writeJSON(w, r, http.StatusOK, out.format, body)
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if out.partial != "" {
		err = s.writePartialList(buf, out, res)
	} else {
		err = s.writeList(buf, res, stream.flusher()) // the fast path: stored bytes spliced, nothing decoded
	}
	switch {
	case err != nil && stream != nil && stream.started:
		// The status is sent: a Status can no longer replace the body, so the connection is cut and
		// the client sees a truncated list, as with kube.
		s.api.cfg.Logger.Warn("LIST stopped after its first bytes: the connection is closed", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	case err != nil:
		writeError(w, r, apiError(err, s.gr, ""))
	case stream != nil && stream.started:
		stream.finish(buf)
	default:
		writeJSON(w, r, http.StatusOK, out.format, buf.Bytes())
	}
}

// tableOf renders stored objects as a meta.k8s.io Table: of one object for a GET (list nil), of a
// page for a LIST.
func (s *scope) tableOf(r *http.Request, out output, items []storage.KeyValue, list *storage.ListResult) ([]byte, error) {
	opts, err := tables.ParseOptions(r.URL.Query())
	if err != nil {
		return nil, err
	}
	opts.Version = out.tableVersion
	if list == nil {
		obj, err := s.decodeStored(items[0])
		if err != nil {
			return nil, err
		}
		t, err := s.table.Convert(obj, opts)
		if err != nil {
			return nil, err
		}
		return json.Marshal(t)
	}
	b, err := s.table.NewBuilder(opts)
	if err != nil {
		return nil, err
	}
	for _, kv := range items {
		obj, err := s.decodeStored(kv)
		if err != nil {
			return nil, err
		}
		if err := b.Add(obj); err != nil {
			return nil, err
		}
	}
	return json.Marshal(b.Finish(metav1.ListMeta{
		ResourceVersion:    strconv.FormatInt(list.Revision, 10),
		Continue:           list.Continue,
		RemainingItemCount: list.RemainingItemCount,
	}))
}
