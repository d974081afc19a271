package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/jsonyaml"
	"github.com/apictl/apictl/pkg/serve/status"
	"github.com/apictl/apictl/pkg/storage"
)

// outputFormat is a response encoding the client accepts.
type outputFormat int

const (
	formatJSON outputFormat = iota
	formatYAML
	// formatProtobuf is accepted in request bodies of built-in kinds only.
	formatProtobuf
	// formatTable is meta.k8s.io/v1 Table, asked for with application/json;as=Table;g=meta.k8s.io;v=v1.
	formatTable
)

const (
	mediaJSON = "application/json"
	mediaYAML = "application/yaml"
)

// notAcceptable is kube's 406.
func notAcceptable() error {
	return statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: application/json, application/yaml")
}

func statusError(code int32, reason metav1.StatusReason, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}

// output is a negotiated response encoding; tableVersion is v1 or v1beta1 for formatTable.
type output struct {
	format       outputFormat
	tableVersion string
	// partial, when set, asks for the object's metadata only (partialmeta.go): PartialObjectMetadata
	// or PartialObjectMetadataList of meta.k8s.io at partialVersion (v1 or v1beta1), in format.
	partial        string
	partialVersion string
}

// conversions are the representations other than the resource's own that a handler can answer
// with (kube's as=...;g=meta.k8s.io;v=... media type parameters).
type conversions uint8

const (
	// convTable allows meta.k8s.io Table (kubectl get).
	convTable conversions = 1 << iota
	// convPartial allows PartialObjectMetadata and PartialObjectMetadataList.
	convPartial
)

// readConversions are what a read of the scope's resource can answer with.
func (s *scope) readConversions() conversions {
	if s.table != nil {
		return convTable | convPartial
	}
	return convPartial
}

// negotiateOutput picks the response encoding from the Accept header as kube's negotiation does: the
// clauses ordered by quality and then specificity (goautoneg, the parser kube uses), and in each the
// first encoding we speak whose parameters we can honour. Table and PartialObjectMetadata(List) are
// offered only where the caller can produce them (allow); other conversions and server versions are
// not served, so a clause asking for them is passed over.
func negotiateOutput(accept string, allow conversions) (output, error) {
	// What client-go's JSON clients send skips the parser: 0 allocations instead of 2 and ~500 ns
	// (BenchmarkNegotiateOutput), with the same answer.
	if accept == "" || accept == mediaJSON {
		return output{format: formatJSON}, nil
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, enc := range encodings {
			if !(clause.Type == "*" && clause.SubType == "*") &&
				!(clause.Type == enc.typ && (clause.SubType == enc.subType || clause.SubType == "*")) {
				continue
			}
			if out, ok := acceptParams(clause.Params, enc.format, allow); ok {
				return out, nil
			}
		}
	}
	return output{}, notAcceptable()
}

// encodings are the response encodings, in kube's order of preference.
var encodings = []struct {
	typ, subType string
	format       outputFormat
}{
	{"application", "json", formatJSON},
	{"application", "yaml", formatYAML},
}

// acceptParams reads a clause's parameters for an encoding, as kube's acceptMediaTypeOptions does, and
// reports whether they can be honoured.
func acceptParams(params map[string]string, format outputFormat, allow conversions) (output, bool) {
	as, g, v := params["as"], params["g"], params["v"]
	if sv := params["sv"]; sv != "" {
		return output{}, false
	}
	if stream := params["stream"]; stream != "" && stream != "watch" {
		return output{}, false
	}
	if as == "" && g == "" && v == "" {
		return output{format: format}, true
	}
	if g != metav1.GroupName || (v != "v1" && v != "v1beta1") {
		return output{}, false
	}
	switch {
	case allow&convTable != 0 && format == formatJSON && as == "Table":
		return output{format: formatTable, tableVersion: v}, true
	case allow&convPartial != 0 && (as == partialObject || as == partialObjectList):
		// kube allows these in every encoding; which one fits the route is the handler's check.
		return output{format: format, partial: as, partialVersion: v}, true
	}
	return output{}, false
}

// writeJSON sends body, a JSON document, in the negotiated format: as it is, indented for ?pretty=true
// and for people's user agents (status.Pretty), or converted to YAML.
func writeJSON(w http.ResponseWriter, r *http.Request, code int, format outputFormat, body []byte) {
	contentType := mediaJSON
	pretty := status.Pretty(r)
	switch {
	case format == formatYAML:
		y, err := jsonyaml.Convert(body)
		if err != nil {
			writeError(w, r, apierrors.NewInternalError(fmt.Errorf("converting the response to YAML: %w", err)))
			return
		}
		body, contentType = y, mediaYAML
	case pretty:
		var b bytes.Buffer
		// Like kube's encoder: indented without the newline that ends compact JSON.
		if err := json.Indent(&b, bytes.TrimRight(body, "\n"), "", "  "); err == nil {
			body = b.Bytes()
		}
	}
	writeBody(w, code, contentType, contentType == mediaJSON && !pretty, body)
}

// writeBody answers code with a body written in parts, one after another. compact says the body is
// compact JSON, which kube's encoder ends with a newline: stored objects and lists are kept without
// one, so it is written after them.
func writeBody(w http.ResponseWriter, code int, contentType string, compact bool, parts ...[]byte) {
	size := 0
	for _, part := range parts {
		size += len(part)
	}
	newline := compact && !bytes.HasSuffix(parts[len(parts)-1], newlineByte)
	if newline {
		size++
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(code)
	for _, part := range parts {
		_, _ = w.Write(part)
	}
	if newline {
		_, _ = w.Write(newlineByte)
	}
}

// writeStoredJSON answers 200 with a stored object as compact JSON, as writeJSON would, writing its
// resourceVersion between the stored bytes rather than into a copy of them: the copy was a cached
// GET's largest allocation. It writes nothing and returns false when the answer is YAML or indented,
// or when kv's place for the resourceVersion is not recorded.
func writeStoredJSON(w http.ResponseWriter, r *http.Request, format outputFormat, kv storage.KeyValue) bool {
	if format != formatJSON || status.Pretty(r) {
		return false
	}
	var buf [48]byte // room for the member with the largest revision
	head, member, tail, ok := kv.ResourceVersionParts(buf[:0])
	if !ok {
		return false
	}
	writeBody(w, http.StatusOK, mediaJSON, true, head, member, tail)
	return true
}

var newlineByte = []byte{'\n'}

// inputFormat reads a request's Content-Type: JSON (the default when none is given) or YAML.
func inputFormat(contentType string) (outputFormat, error) {
	if contentType == "" {
		return formatJSON, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil {
		switch mt {
		case mediaJSON:
			return formatJSON, nil
		case mediaYAML:
			return formatYAML, nil
		case mediaProtobuf:
			return formatProtobuf, nil
		}
	}
	return 0, unsupportedMediaType(mediaJSON, mediaYAML, mediaProtobuf)
}

// unsupportedMediaType is kube's 415 for a body in a format the route does not take.
func unsupportedMediaType(accepted ...string) error {
	return statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "))
}
