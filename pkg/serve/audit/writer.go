package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
)

// responseWriter notes the response code for the event (writing ResponseStarted for long-running
// requests when it is known) and keeps the body when the event needs it: every JSON body at
// RequestResponse level, and at any level a Status body, whose fields kube copies into
// responseStatus.
type responseWriter struct {
	http.ResponseWriter
	e           *event
	longRunning bool
	keepBody    bool
	limit       int

	started bool
	code    int
	// keeping is decided at the first write: whether this body is recorded.
	decided, keeping, isStatus, over bool
	buf                              bytes.Buffer
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *responseWriter) start(code int) {
	if w.started {
		return
	}
	w.started, w.code = true, code
	w.e.setStatus(&metav1.Status{Code: int32(code)})
	if w.longRunning {
		w.e.process(auditinternal.StageResponseStarted)
	}
}

func (w *responseWriter) WriteHeader(code int) {
	w.start(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.start(http.StatusOK)
	if !w.decided {
		w.decide(b)
	}
	if w.keeping && !w.over {
		if w.buf.Len()+len(b) > w.limit {
			w.over, w.buf = true, bytes.Buffer{}
		} else {
			w.buf.Write(b)
		}
	}
	return w.ResponseWriter.Write(b)
}

// decide looks at the first bytes of the body: only JSON is recorded, and below RequestResponse
// only a Status.
func (w *responseWriter) decide(first []byte) {
	w.decided = true
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		return
	}
	w.isStatus = looksLikeStatus(first)
	w.keeping = w.keepBody || w.isStatus
}

// looksLikeStatus reports whether a JSON body begins as a Status does, compact or indented.
func looksLikeStatus(b []byte) bool {
	if len(b) > 64 {
		b = b[:64]
	}
	b = bytes.TrimLeft(b, " \t\r\n")
	if !bytes.HasPrefix(b, []byte("{")) {
		return false
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if !bytes.HasPrefix(b, []byte(`"kind"`)) {
		return false
	}
	b = bytes.TrimLeft(b[len(`"kind"`):], " \t\r\n")
	if !bytes.HasPrefix(b, []byte(":")) {
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(b[1:], " \t\r\n"), []byte(`"Status"`))
}

func (w *responseWriter) Flush() {
	w.start(http.StatusOK)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the response writer %T cannot be hijacked", w.ResponseWriter)
	}
	// As kube does, the protocol switch is the response status.
	w.start(http.StatusSwitchingProtocols)
	return h.Hijack()
}

// recorded is the whole response body, nil if none was kept.
func (w *responseWriter) recorded() []byte {
	if !w.keeping || w.over || w.buf.Len() == 0 {
		return nil
	}
	return w.buf.Bytes()
}

// statusObject is the Status the response carried, if it was one.
func (w *responseWriter) statusObject() *metav1.Status {
	raw := w.recorded()
	if !w.isStatus || raw == nil {
		return nil
	}
	var s metav1.Status
	if err := json.Unmarshal(raw, &s); err != nil || s.Kind != "Status" {
		return nil
	}
	if s.Code == 0 {
		// kube's handlers fill in the code of a success Status in memory only; the event has it.
		s.Code = int32(w.code)
	}
	return &s
}
