// Package gzipstream writes a gzip stream (RFC 1952) whose large chunks are compressed each on its
// own, so that a chunk compressed once is sent again from a cache, by its content, rather than
// compressed again.
//
// A LIST is most of a server's compression work, and the same LIST is asked for again and again
// (kubectl get, informers relisting, controllers that poll) while its objects do not change. Level 1
// deflate costs about 1.5 ms per 600 KB, three times what producing the list costs (issue 38), and
// kube's threshold compresses every LIST over 128 KiB. A chunk here is a deflate run that refers to
// nothing before it and ends on a byte boundary (a sync flush after a reset), so its compressed
// bytes are the same wherever it stands in a stream; the stream's CRC and length are kept over the
// bytes themselves.
package gzipstream

import (
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
)

// Level is the deflate level: kube's gzipContentEncodingLevel, BestSpeed.
const Level = flate.BestSpeed

// header is the gzip header the standard library's gzip.Writer writes at BestSpeed, as kube's
// responses begin: no name, no time, XFL 4 (fastest), OS 255 (unknown).
var header = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

// Writer writes one gzip stream: Write's bytes compressed as a stream, WriteChunk's each on its own,
// in any mix. It is not safe for concurrent use; its Cache is.
type Writer struct {
	fw  *flate.Writer
	out tee
	// cache holds chunks already compressed; nil compresses every chunk as stream.
	cache *Cache
	crc   uint32
	size  uint32
	// started is set once the header is written, pending while fw holds bytes not flushed out, and
	// stale when fw's history is not what the stream last held (a chunk came from the cache).
	started, pending, stale bool
	// chunks counts the chunks this stream looked up, to stop at maxChunks.
	chunks int
}

// tee is where fw writes: the stream, and, while a chunk is compressed for the cache, a copy.
type tee struct {
	w       io.Writer
	copying bool
	copy    []byte
}

func (t *tee) Write(p []byte) (int, error) {
	if t.copying {
		t.copy = append(t.copy, p...)
	}
	return t.w.Write(p)
}

// NewWriter returns a Writer of a gzip stream to w, which takes its chunks from cache (nil for none).
func NewWriter(w io.Writer, cache *Cache) *Writer {
	z := &Writer{}
	// NewWriter fails only for a level out of range; Level is in range.
	z.fw, _ = flate.NewWriter(&z.out, Level)
	z.Reset(w, cache)
	return z
}

// Reset makes z a new stream to w, keeping its compressor's memory.
func (z *Writer) Reset(w io.Writer, cache *Cache) {
	z.out = tee{w: w, copy: z.out.copy[:0]}
	z.fw.Reset(&z.out)
	z.cache, z.crc, z.size = cache, 0, 0
	z.started, z.pending, z.stale = false, false, false
	z.chunks = 0
}

// Write compresses p as part of the stream, with what came before it as its history.
func (z *Writer) Write(p []byte) (int, error) {
	if err := z.start(); err != nil {
		return 0, err
	}
	if z.stale {
		z.fw.Reset(&z.out)
		z.stale = false
	}
	z.account(p)
	z.pending = z.pending || len(p) > 0
	return z.fw.Write(p)
}

// The chunks a stream takes from and adds to its cache: at least minChunk bytes, and no more than
// maxChunks of them, so that one huge LIST neither sweeps the cache out nor fills it with what is
// never asked for again; the rest are compressed as stream.
const (
	minChunk  = 8 << 10
	maxChunks = 32
)

// WriteChunk writes p compressed on its own: from the cache when it holds p, else compressed and
// added to it. A chunk the stream does not cache (see maxChunks) is written as Write writes it.
func (z *Writer) WriteChunk(p []byte) error {
	if z.cache == nil || len(p) < minChunk || z.chunks >= maxChunks {
		_, err := z.Write(p)
		return err
	}
	z.chunks++
	if err := z.start(); err != nil {
		return err
	}
	// What the compressor holds goes first, ending on a byte boundary for the chunk to follow.
	if z.pending {
		if err := z.fw.Flush(); err != nil {
			return err
		}
		z.pending = false
	}
	k := z.cache.key(p)
	z.account(p)
	if compressed, ok := z.cache.get(k); ok {
		z.stale = true
		_, err := z.out.w.Write(compressed)
		return err
	}
	// A reset leaves nothing before the chunk to refer to; the flush ends it on a byte boundary.
	z.fw.Reset(&z.out)
	z.stale = false
	z.out.copying, z.out.copy = true, z.out.copy[:0]
	_, err := z.fw.Write(p)
	if err == nil {
		err = z.fw.Flush()
	}
	z.out.copying = false
	if err != nil {
		return err
	}
	z.cache.add(k, z.out.copy)
	return nil
}

// Close ends the stream: the compressor's last block and the gzip trailer. It does not close the
// underlying writer.
func (z *Writer) Close() error {
	if err := z.start(); err != nil {
		return err
	}
	if z.stale {
		z.fw.Reset(&z.out)
		z.stale = false
	}
	if err := z.fw.Close(); err != nil {
		return err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], z.crc)
	binary.LittleEndian.PutUint32(trailer[4:], z.size)
	_, err := z.out.w.Write(trailer[:])
	return err
}

func (z *Writer) start() error {
	if z.started {
		return nil
	}
	z.started = true
	_, err := z.out.w.Write(header[:])
	return err
}

// account adds p to the stream's CRC and length (mod 2^32, as gzip's ISIZE is).
func (z *Writer) account(p []byte) {
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.size += uint32(len(p))
}
