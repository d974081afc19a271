package gzipstream

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// text is n bytes like a list's: items alike but not the same, so that deflate finds matches near
// and far.
func text(rnd *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, `{"metadata":{"name":"cm%05d","uid":"%016x"},"data":{"key":"%x"}},`, rnd.IntN(100000), rnd.Uint64(), rnd.Uint64()%(1+rnd.Uint64N(1<<40)))
	}
	return b.Bytes()[:n]
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decompressing: %v", err)
	}
	if rest, _ := io.ReadAll(zr); len(rest) > 0 {
		t.Fatalf("%d bytes after the stream", len(rest))
	}
	return out
}

// TestWriter writes streams of Writes and chunks in every mix, sizes on both sides of minChunk, the
// same chunks again (from the cache) and past maxChunks, and reads each back with the standard
// library's reader, which checks the CRC and length. Streams that share a cache must still read
// back whole when they take each other's chunks.
func TestWriter(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	pool := [][]byte{text(rnd, minChunk), text(rnd, 40<<10), text(rnd, 20<<10), text(rnd, minChunk-1), text(rnd, 3)}
	// New bytes are windows of one long text, which is quicker than making each.
	fresh := text(rnd, 1<<20)
	for _, cached := range []bool{false, true} {
		var cache *Cache
		if cached {
			cache = NewCache(1 << 20)
		}
		for round := range 40 {
			var out, want bytes.Buffer
			z := NewWriter(&out, cache)
			ops := rnd.IntN(3 * maxChunks)
			if round == 0 {
				ops = 0 // an empty stream
			}
			for range ops {
				var p []byte
				if rnd.IntN(3) == 0 {
					from := rnd.IntN(len(fresh))
					p = fresh[from : from+rnd.IntN(min(64<<10, len(fresh)-from)+1)]
				} else {
					p = pool[rnd.IntN(len(pool))]
				}
				want.Write(p)
				if rnd.IntN(2) == 0 {
					if n, err := z.Write(p); n != len(p) || err != nil {
						t.Fatalf("Write = %d, %v", n, err)
					}
				} else if err := z.WriteChunk(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out.Bytes(), header[:]) {
				t.Fatalf("header % x", out.Bytes()[:10])
			}
			if got := gunzip(t, out.Bytes()); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("cached=%v round %d: %d bytes back, want %d", cached, round, len(got), want.Len())
			}
		}
		if cached {
			if n, size := cache.Len(); n == 0 || size > 1<<20 {
				t.Errorf("cache holds %d chunks, %d bytes, of 1 MiB", n, size)
			}
		}
	}
}

// TestHeader holds the header to the one the standard library's gzip.Writer writes at BestSpeed,
// as kube-apiserver does: no name, no time, XFL 4, OS 255.
func TestHeader(t *testing.T) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write([]byte("x"))
	_ = zw.Close()
	if !bytes.Equal(b.Bytes()[:10], header[:]) {
		t.Errorf("header % x, want % x", header, b.Bytes()[:10])
	}
}

// TestWriteChunkCache checks that a chunk is compressed once: the second stream of the same chunks
// sends the bytes the first compressed, a stream stops caching after maxChunks, and the cache keeps
// to its size, the least recently used going first.
func TestWriteChunkCache(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	a, b := text(rnd, 256<<10), text(rnd, 256<<10)
	cache := NewCache(1 << 30)
	stream := func(chunks ...[]byte) []byte {
		var out bytes.Buffer
		z := NewWriter(&out, cache)
		for _, c := range chunks {
			if err := z.WriteChunk(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	first := stream(a, b)
	if n, _ := cache.Len(); n != 2 {
		t.Fatalf("cache holds %d chunks after two, want 2", n)
	}
	if again := stream(a, b); !bytes.Equal(again, first) {
		t.Error("the same chunks again came out other than the first time")
	}
	// b then a: each chunk's bytes from the cache, in the other order, still one valid stream.
	if got := gunzip(t, stream(b, a)); !bytes.Equal(got, append(append([]byte(nil), b...), a...)) {
		t.Error("chunks from the cache in another order read back wrong")
	}
	many := make([][]byte, maxChunks+5)
	for i := range many {
		many[i] = text(rnd, minChunk)
	}
	stream(many...)
	if n, _ := cache.Len(); n != 2+maxChunks {
		t.Errorf("cache holds %d chunks after a stream of %d, want %d", n, len(many), 2+maxChunks)
	}

	small := NewCache(10_000)
	for _, c := range append([][]byte{a, b}, many[:maxChunks]...) {
		small.add(small.key(c), make([]byte, 1000))
	}
	if n, size := small.Len(); n != 10 || size != 10_000 {
		t.Errorf("cache of 10,000 bytes holds %d chunks, %d bytes, want 10 of 1,000", n, size)
	}
	if _, ok := small.get(small.key(a)); ok {
		t.Error("the least recently used chunk is still cached")
	}
	if _, ok := small.get(small.key(many[maxChunks-1])); !ok {
		t.Error("the most recently added chunk is gone")
	}
}

// BenchmarkWriteChunk is a LIST of 600 KB in 256 KiB chunks, compressed (miss: every chunk new) and
// sent again (hit: every chunk cached).
func BenchmarkWriteChunk(b *testing.B) {
	rnd := rand.New(rand.NewPCG(5, 6))
	list := text(rnd, 600<<10)
	for _, hit := range []bool{false, true} {
		b.Run(map[bool]string{false: "miss", true: "hit"}[hit], func(b *testing.B) {
			var out bytes.Buffer
			z := NewWriter(&out, nil)
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				cache := NewCache(64 << 20)
				if hit {
					cache = sharedCache(b, list)
				}
				out.Reset()
				z.Reset(&out, cache)
				for p := list; len(p) > 0; {
					n := min(len(p), 256<<10)
					_ = z.WriteChunk(p[:n])
					p = p[n:]
				}
				_ = z.Close()
			}
			b.ReportMetric(float64(len(list))/float64(out.Len()), "ratio")
		})
	}
}

var shared *Cache

func sharedCache(b *testing.B, list []byte) *Cache {
	if shared == nil {
		shared = NewCache(64 << 20)
		z := NewWriter(io.Discard, shared)
		for p := list; len(p) > 0; {
			n := min(len(p), 256<<10)
			if err := z.WriteChunk(p[:n]); err != nil {
				b.Fatal(err)
			}
			p = p[n:]
		}
	}
	return shared
}
