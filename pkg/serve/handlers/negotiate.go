package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/pkg/serve/status"
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
}

// negotiateOutput picks the response encoding from the Accept header, in the client's order: the first
// media range we speak wins. Table is offered only where the caller can produce one.
func negotiateOutput(accept string, tables bool) (output, error) {
	if strings.TrimSpace(accept) == "" {
		return output{format: formatJSON}, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaJSON:
			switch as := params["as"]; {
			case as == "":
				return output{format: formatJSON}, nil
			case as == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1"):
				if tables {
					return output{format: formatTable, tableVersion: params["v"]}, nil
				}
			}
		case mediaYAML, "application/*+yaml":
			if params["as"] == "" {
				return output{format: formatYAML}, nil
			}
		case "*/*", "application/*":
			return output{format: formatJSON}, nil
		}
	}
	return output{}, notAcceptable()
}

// writeJSON sends body, a JSON document, in the negotiated format: as it is, indented for ?pretty=true
// and for people's user agents (status.Pretty), or converted to YAML.
func writeJSON(w http.ResponseWriter, r *http.Request, code int, format outputFormat, body []byte) {
	contentType := mediaJSON
	switch {
	case format == formatYAML:
		y, err := yaml.JSONToYAML(body)
		if err != nil {
			writeError(w, r, apierrors.NewInternalError(fmt.Errorf("converting the response to YAML: %w", err)))
			return
		}
		body, contentType = y, mediaYAML
	case status.Pretty(r):
		var b bytes.Buffer
		// Like kube's encoder: indented without the newline that ends compact JSON.
		if err := json.Indent(&b, bytes.TrimRight(body, "\n"), "", "  "); err == nil {
			body = b.Bytes()
		}
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

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
