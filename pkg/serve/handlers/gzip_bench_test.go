package handlers

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// BenchmarkGzipList compresses a LIST of 1,000 ConfigMaps (about 500 KB) at kube's level, in the
// 256 KiB chunks a streamed LIST is written in, with the standard library's gzip and with
// klauspost/compress's, whose deflate compress.go uses through pkg/gzipstream (issue 38: the CPU per
// gzipped LIST; gzipstream's BenchmarkWriteChunk measures its cache). The ratio is reported too: a
// faster compressor must not send many more bytes.
func BenchmarkGzipList(b *testing.B) {
	// Values as varied as real ones: a list of repeated bytes compresses 40 to 1 with any compressor.
	rnd := rand.NewChaCha8([32]byte{})
	var list bytes.Buffer
	list.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1234"},"items":[`)
	for i := range 1000 {
		if i > 0 {
			list.WriteByte(',')
		}
		value := make([]byte, 100)
		_, _ = rnd.Read(value)
		fmt.Fprintf(&list, `{"metadata":{"name":"cm%04d","namespace":"default","uid":"6f0b3c1e-%04d-4a57-9b0e-1f0b3d0d5a11","resourceVersion":"%d","creationTimestamp":"2026-12-02T06:00:00Z","labels":{"app":"bench"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"v1","time":"2026-12-02T06:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:key":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},"data":{"key":"%x"}}`, i, i, 1000+i, value)
	}
	list.WriteString("]}\n")
	src := list.Bytes()
	for _, bc := range []struct {
		name string
		new  func(io.Writer) io.WriteCloser
	}{
		{"stdlib", func(w io.Writer) io.WriteCloser { z, _ := stdgzip.NewWriterLevel(w, stdgzip.BestSpeed); return z }},
		{"klauspost", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, gzip.BestSpeed); return z }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				out.Reset()
				z := bc.new(&out)
				for p := src; len(p) > 0; {
					n := min(len(p), listChunkBytes)
					_, _ = z.Write(p[:n])
					p = p[n:]
				}
				_ = z.Close()
			}
			b.ReportMetric(float64(len(src))/float64(out.Len()), "ratio")
		})
	}
}
