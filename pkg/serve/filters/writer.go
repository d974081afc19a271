package filters

import (
	"net/http"
)

// recordingWriter remembers the status code and whether anything was written, for filters that
// observe responses. It keeps Flush, which watch streams need, and Unwrap for http.ResponseController.
type recordingWriter struct {
	http.ResponseWriter
	code    int
	written int64
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += int64(n)
	return n, err
}

func (w *recordingWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status returns the code sent, 200 if the handler wrote nothing at all (net/http's default).
func (w *recordingWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
