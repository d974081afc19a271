package handlers

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		headers []string
		want    bool
	}{
		{name: "none"},
		{name: "gzip", headers: []string{"gzip"}, want: true},
		{name: "spaces", headers: []string{"  gzip  "}, want: true},
		{name: "browser", headers: []string{"gzip, deflate, br, zstd"}, want: true},
		{name: "not first", headers: []string{"br , gzip "}, want: true},
		// kube compares whole tokens: a q-value, even 1, makes the token something else.
		{name: "q-value", headers: []string{"gzip;q=1.0"}},
		{name: "q zero", headers: []string{"gzip;q=0"}},
		{name: "wildcard", headers: []string{"*"}},
		{name: "upper case", headers: []string{"GZIP"}},
		{name: "x-gzip", headers: []string{"x-gzip"}},
		{name: "identity", headers: []string{"identity"}},
		// Header.Get: only the first line counts.
		{name: "second header", headers: []string{"br", "gzip"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Accept-Encoding", h)
			}
			if got := acceptsGzip(r); got != tt.want {
				t.Errorf("acceptsGzip(%q) = %v, want %v", tt.headers, got, tt.want)
			}
		})
	}
}

func TestGzipWriter(t *testing.T) {
	body := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	for _, tt := range []struct {
		name string
		// contentLength is set by the handler before it writes, unless negative.
		contentLength int
		code          int
		writes        [][]byte
		wantGzip      bool
	}{
		{name: "small", contentLength: -1, code: 200, writes: [][]byte{body(1000)}},
		{name: "at the threshold", contentLength: -1, code: 200, writes: [][]byte{body(gzipThreshold)}},
		{name: "above the threshold", contentLength: -1, code: 200, writes: [][]byte{body(gzipThreshold + 1)}, wantGzip: true},
		// Decided on the first write, as kube decides, not on the total.
		{name: "small first write", contentLength: -1, code: 200, writes: [][]byte{body(1000), body(gzipThreshold)}},
		{name: "streamed", contentLength: -1, code: 200, writes: [][]byte{body(listChunkBytes), body(listChunkBytes), body(10)}, wantGzip: true},
		// writeJSON's body and its newline are one encoder write in kube: Content-Length counts both.
		{name: "length with newline", contentLength: gzipThreshold + 1, code: 200, writes: [][]byte{body(gzipThreshold), {'\n'}}, wantGzip: true},
		{name: "length at the threshold", contentLength: gzipThreshold, code: 200, writes: [][]byte{body(gzipThreshold - 1), {'\n'}}},
		{name: "error", contentLength: -1, code: http.StatusNotFound, writes: [][]byte{body(gzipThreshold + 1)}, wantGzip: true},
		{name: "created", contentLength: -1, code: http.StatusCreated, writes: [][]byte{body(10)}},
		{name: "no body", contentLength: -1, code: http.StatusNoContent},
		{name: "no status", contentLength: -1, writes: [][]byte{body(gzipThreshold + 1)}, wantGzip: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := &gzipWriter{ResponseWriter: rec, pool: newGzipPool()}
			var want []byte
			for _, p := range tt.writes {
				want = append(want, p...)
			}
			if tt.contentLength >= 0 {
				w.Header().Set("Content-Length", strconv.Itoa(tt.contentLength))
			}
			if tt.code != 0 {
				w.WriteHeader(tt.code)
				if rec.Code != http.StatusOK || rec.Flushed {
					t.Fatal("the status went out before the first write")
				}
			}
			for _, p := range tt.writes {
				if n, err := w.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.close(); err != nil {
				t.Fatal(err)
			}
			wantCode := tt.code
			if wantCode == 0 {
				wantCode = http.StatusOK
			}
			if rec.Code != wantCode {
				t.Errorf("status %d, want %d", rec.Code, wantCode)
			}
			h := rec.Header()
			got := rec.Body.Bytes()
			if !tt.wantGzip {
				if h.Get("Content-Encoding") != "" || h.Get("Vary") != "" {
					t.Errorf("uncompressed response has Content-Encoding %q, Vary %q", h.Get("Content-Encoding"), h.Get("Vary"))
				}
				if tt.contentLength >= 0 && h.Get("Content-Length") != strconv.Itoa(tt.contentLength) {
					t.Errorf("Content-Length %q, want %d", h.Get("Content-Length"), tt.contentLength)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("body of %d bytes, want %d", len(got), len(want))
				}
				return
			}
			if h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" || h.Get("Content-Length") != "" {
				t.Errorf("compressed response has Content-Encoding %q, Vary %q, Content-Length %q",
					h.Get("Content-Encoding"), h.Get("Vary"), h.Get("Content-Length"))
			}
			if plain := gunzip(t, got); !bytes.Equal(plain, want) {
				t.Errorf("decompressed body of %d bytes, want %d", len(plain), len(want))
			}
		})
	}
}

// TestGzipWriterStreams checks that a compressed LIST still streams: a chunk's bytes reach the
// client before the handler ends, and the compressor holds back at most one deflate block. Staged
// (as listStream sends through a stager), a chunk reaches the client on send, not before.
func TestGzipWriterStreams(t *testing.T) {
	var sent bytes.Buffer
	for i := 0; sent.Len() < 4*listChunkBytes; i++ {
		sent.WriteString(strconv.Itoa(i*7919) + ` "items are not all alike, or deflate would make them nothing at all"` + "\n")
	}
	for _, staged := range []bool{false, true} {
		t.Run("staged="+strconv.FormatBool(staged), func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := &gzipWriter{ResponseWriter: rec, pool: newGzipPool()}
			w.WriteHeader(http.StatusOK)
			// A chunk at a time, as listStream writes.
			for rest := sent.Bytes(); len(rest) > 0; {
				chunk := rest[:min(listChunkBytes, len(rest))]
				rest = rest[len(chunk):]
				if !staged {
					if _, err := w.Write(chunk); err != nil {
						t.Fatal(err)
					}
					continue
				}
				before := rec.Body.Len()
				if err := w.stage(chunk); err != nil {
					t.Fatal(err)
				}
				if rec.Body.Len() != before {
					t.Fatalf("stage sent %d bytes", rec.Body.Len()-before)
				}
				if err := w.send(); err != nil {
					t.Fatal(err)
				}
			}
			// What left so far must decompress to all that was written but the last block.
			zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			partial, _ := io.ReadAll(zr) // ends in io.ErrUnexpectedEOF: the stream is not closed yet
			if held := sent.Len() - len(partial); held > 64<<10 || !bytes.HasPrefix(sent.Bytes(), partial) {
				t.Errorf("before close the client can read %d of %d bytes: the compressor holds %d", len(partial), sent.Len(), held)
			}
			if err := w.close(); err != nil {
				t.Fatal(err)
			}
			if got := gunzip(t, rec.Body.Bytes()); !bytes.Equal(got, sent.Bytes()) {
				t.Errorf("decompressed %d bytes, want %d", len(got), sent.Len())
			}
		})
	}
}

// Gunzip is gunzip for the package's external tests.
var Gunzip = gunzip

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decompressing: %v", err)
	}
	return out
}
