package handlers

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync"

	"github.com/apictl/apictl/pkg/storage"
)

// listChunkBytes is how much of a LIST is assembled before it is sent: a LIST holds this much plus
// one object, whatever the size of the list, and the first bytes leave before the last item is
// written. kube-apiserver streams list items the same way (KEP-5116).
const listChunkBytes = 256 << 10

// maxPooledBytes caps the buffers kept for reuse. A buffer that grew past it (a huge object, or a
// list in an encoding that is not streamed: YAML, indented JSON, a Table) is dropped, so that a few
// large LISTs do not pin their memory for the life of the process (golang/go#23199).
const maxPooledBytes = 1 << 20

// bufferPool holds the buffers lists are assembled in, so a list of a thousand objects does not
// allocate its megabyte afresh on every request.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBytes {
		return
	}
	buf.Reset()
	bufferPool.Put(buf)
}

// listStream sends a compact-JSON list in chunks as writeList produces them. A list that fits in one
// chunk is never flushed and goes out as before, with its Content-Length; a longer one goes out
// chunked, with the status and headers sent before its first chunk.
//
// Once it has sent seatAfterChunks chunks, a list produces each further chunk only in one of the
// server's list seats (newListSeats), and gives the seat up while the chunk is written out. Producing a chunk is nothing
// but copying bytes, so without seats a few LISTs of a million objects keep every core busy and a GET
// waits behind them in the scheduler's queue: 505 ms at p99 beside 8 of them on 2 cores (issue 22).
// With them, all the big LISTs together use at most half the cores, and small requests pass between
// their chunks. kube's priority and fairness gives a LIST several seats for the same reason. Lists of
// a few MiB, the common ones, never take a seat: they keep every core (the LIST rows of the bench).
type listStream struct {
	w     http.ResponseWriter
	ctx   context.Context
	seats chan struct{}
	// contentType is the list's: JSON (of any representation) or YAML.
	contentType string
	// indent, when set, indents the JSON as it is sent (?pretty, curl's user agent); indented holds
	// a chunk once indented.
	indent   *jsonIndenter
	indented *bytes.Buffer
	// converts is set for a list whose items are converted (decoded, made rows or YAML): it costs
	// several times a spliced list's CPU per chunk, so it takes a seat from its second chunk on.
	converts bool
	started  bool
	seated   bool
	chunks   int
}

// seatAfterChunks is how many chunks (4 MiB) a list sends before it needs a seat for the next.
const seatAfterChunks = 16

// newListSeats makes the list seats of a server: half the cores it may use, at least one.
func newListSeats() chan struct{} {
	return make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))
}

// flush sends what buf holds and empties it, then waits for a seat to produce the next chunk in.
func (ls *listStream) flush(buf *bytes.Buffer) error {
	if !ls.started {
		ls.w.Header().Set("Content-Type", ls.contentType)
		ls.w.WriteHeader(http.StatusOK)
		ls.started = true
	}
	err := ls.send(ls.body(buf))
	buf.Reset()
	if err != nil {
		return err
	}
	if ls.chunks++; ls.chunks < seatAfterChunks && !ls.converts {
		return nil
	}
	select {
	case ls.seats <- struct{}{}:
		ls.seated = true
		return nil
	case <-ls.ctx.Done():
		return ls.ctx.Err()
	}
}

// stager is a response writer that does CPU work on a body before it sends it: gzipWriter, which
// compresses.
type stager interface {
	// stage does the work on p, which must stay unchanged until send returns.
	stage(p []byte) error
	send() error
}

var _ stager = (*gzipWriter)(nil)

// send writes a chunk out, giving up the seat before the writing: a slow client must not hold a
// seat. What a stager does to the chunk first (gzip) is CPU work like producing it, done in the seat.
func (ls *listStream) send(p []byte) error {
	sw, ok := ls.w.(stager)
	if !ok {
		ls.leave()
		_, err := ls.w.Write(p)
		return err
	}
	err := sw.stage(p)
	ls.leave()
	if err != nil {
		return err
	}
	return sw.send()
}

// leave gives up the seat ls holds, if any.
func (ls *listStream) leave() {
	if ls.seated {
		<-ls.seats
		ls.seated = false
	}
}

// done gives up what ls holds once the list is answered: its seat and the buffer it indented in.
func (ls *listStream) done() {
	ls.leave()
	if ls.indented != nil {
		putBuffer(ls.indented)
		ls.indented = nil
	}
}

// body is what is sent of buf: buf, or buf indented.
func (ls *listStream) body(buf *bytes.Buffer) []byte {
	if ls.indent == nil {
		return buf.Bytes()
	}
	if ls.indented == nil {
		ls.indented = getBuffer()
	}
	ls.indented.Reset()
	ls.indent.write(ls.indented, buf.Bytes())
	return ls.indented.Bytes()
}

// finish sends the rest of a started stream, with the newline that ends kube's compact JSON (its
// indented JSON has none, and YAML ends with its own).
func (ls *listStream) finish(buf *bytes.Buffer) {
	if ls.contentType == mediaJSON && ls.indent == nil {
		buf.WriteByte('\n')
	}
	_ = ls.send(ls.body(buf))
}

// writeList encodes a page of stored objects as kube's encoders write a list (objectList), for LIST
// and for the answer of a deletecollection. With flush set, buf is handed to it whenever it holds
// listChunkBytes, so that the list streams.
func (s *scope) writeList(buf *bytes.Buffer, res *storage.ListResult, flush func(*bytes.Buffer) error) error {
	return encodeList(buf, objectList{s: s, res: res}, res, flush)
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
