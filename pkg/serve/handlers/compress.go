package handlers

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/apictl/apictl/pkg/gzipstream"
)

// kube-apiserver's APIResponseCompression (k8s.io/apiserver responsewriters, writers.go and
// compression.go), which this file follows.
const (
	// gzipThreshold is kube's defaultGzipThresholdBytes: a response is compressed only when it is
	// larger, because below it gzip costs the server more CPU than it saves the network.
	gzipThreshold = 128 << 10
	// gzipCacheBytes bounds the compressed LIST chunks kept to be sent again (gzipPool.chunks).
	gzipCacheBytes = 32 << 20
)

// gzipPool holds gzip writers for reuse (a compressor carries over half a megabyte of tables, too
// much to allocate for every large response), and the chunks of LISTs compressed already, which a
// LIST of the same objects sends again rather than compressing them again (gzipstream). Level 1,
// kube's gzipContentEncodingLevel, is gzipstream.Level: the least CPU for a ratio within 1.1-1.5x of
// the best (kubernetes/kubernetes#112296).
type gzipPool struct {
	pool   sync.Pool
	chunks *gzipstream.Cache
}

func newGzipPool() *gzipPool { return &gzipPool{chunks: gzipstream.NewCache(gzipCacheBytes)} }

func (p *gzipPool) get(w io.Writer) *gzipstream.Writer {
	gz, _ := p.pool.Get().(*gzipstream.Writer)
	if gz == nil {
		return gzipstream.NewWriter(w, p.chunks)
	}
	gz.Reset(w, p.chunks)
	return gz
}

func (p *gzipPool) put(gz *gzipstream.Writer) {
	gz.Reset(io.Discard, nil) // so the pool does not keep the response writer alive
	p.pool.Put(gz)
}

// acceptsGzip reports whether a request's Accept-Encoding names gzip, tested as kube tests it: the
// first Accept-Encoding header only, split at commas, a token equal to "gzip" once trimmed. So
// "gzip;q=0.5" (and "gzip;q=0") does not count, nor does "*" or "GZIP".
func acceptsGzip(r *http.Request) bool {
	encoding := r.Header.Get("Accept-Encoding")
	for encoding != "" {
		var token string
		token, encoding, _ = strings.Cut(encoding, ",")
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}

// gzipWriter compresses a response when it turns out large, as kube's deferredResponseWriter does:
// the status is held back until the first write, whose size decides. A response larger than
// gzipThreshold goes out with Content-Encoding: gzip and Vary: Accept-Encoding and without its
// Content-Length; a smaller one goes out untouched.
//
// The size that decides is the Content-Length the handler set, when it set one (writeJSON writes its
// trailing newline apart, and kube counts it), else the first write's. A streamed LIST's first write
// is a whole chunk (listChunkBytes, above the threshold) and a LIST shorter than a chunk is written
// whole, so a LIST is compressed exactly when kube's buffering of its streaming encoder would.
//
// The compressor emits a deflate block every 64 KiB of input, so a streamed LIST stays streamed:
// nothing holds more than a block of it. A streamed LIST compresses its chunks in its list seat and
// sends them outside it (stage and send): compressing costs more CPU than producing the chunk, and
// the seats exist to bound the CPU that big LISTs take (listbody.go). Each staged chunk is
// compressed on its own, and sent from the pool's cache when the same bytes were compressed before.
type gzipWriter struct {
	http.ResponseWriter
	pool *gzipPool
	// code is the status the handler asked for, sent with the first write; 0 before it asks.
	code    int
	decided bool
	gz      *gzipstream.Writer // nil unless compressing; it writes to sink
	sink    gzipSink
	// staged is what stage produced and send has not sent: compressed bytes in sink's buffer, or the
	// caller's bytes as they are when the response is not compressed.
	staged []byte
}

// gzipSink is where the compressor's output goes: straight to the client, or into a buffer while
// a chunk is staged.
type gzipSink struct {
	w       http.ResponseWriter
	staging bool
	buf     *bytes.Buffer // from bufferPool, once a chunk was staged
}

func (s *gzipSink) Write(p []byte) (int, error) {
	if s.staging {
		return s.buf.Write(p)
	}
	return s.w.Write(p)
}

// WriteHeader holds the status back: whether the headers say gzip depends on the first write.
func (w *gzipWriter) WriteHeader(code int) {
	if w.decided || w.code != 0 {
		return
	}
	w.code = code
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if !w.decided {
		w.decide(len(p))
	}
	if w.gz != nil {
		return w.gz.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// stage does the CPU work of writing p, compressing it, without sending anything; send sends it.
// p must stay unchanged until send returns.
func (w *gzipWriter) stage(p []byte) error {
	if !w.decided {
		w.decide(len(p))
	}
	if w.gz == nil {
		w.staged = p
		return nil
	}
	if w.sink.buf == nil {
		w.sink.buf = getBuffer()
	}
	w.sink.buf.Reset()
	w.sink.staging = true
	err := w.gz.WriteChunk(p)
	w.sink.staging = false
	w.staged = w.sink.buf.Bytes()
	return err
}

// send sends what stage staged.
func (w *gzipWriter) send() error {
	p := w.staged
	w.staged = nil
	if len(p) == 0 {
		return nil // the compressor kept all of the chunk: it fit in its current block
	}
	_, err := w.ResponseWriter.Write(p)
	return err
}

// decide picks compression for a response whose first write is size bytes, and sends the headers.
func (w *gzipWriter) decide(size int) {
	w.decided = true
	h := w.Header()
	if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil {
		size = n
	}
	if size > gzipThreshold {
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.sink.w = w.ResponseWriter
		w.gz = w.pool.get(&w.sink)
	}
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.code)
}

// close ends the response: it sends a status that no write followed, or ends the gzip stream. It is
// called only when the handler returns: one that aborts a started response (http.ErrAbortHandler)
// must leave the stream unterminated, so that the client sees a cut body rather than a complete one.
func (w *gzipWriter) close() error {
	if !w.decided {
		w.decided = true
		if w.code != 0 {
			w.ResponseWriter.WriteHeader(w.code)
		}
		return nil
	}
	if w.gz == nil {
		return nil
	}
	err := w.gz.Close()
	w.pool.put(w.gz)
	w.gz = nil
	if w.sink.buf != nil {
		putBuffer(w.sink.buf)
		w.sink.buf = nil
	}
	return err
}
