package cacher

import (
	"slices"
	"sort"
	"sync/atomic"
)

// index holds the current version of every key, sorted by key, in chunks of at most maxChunk: an
// insert moves at most a chunk's worth of pointers, and a snapshot for a list costs a copy of the
// chunk list, not of the items.
//
// Chunks are copied on write: snapshot bumps gen, and a chunk older than gen may be in some snapshot,
// so the writer copies it before changing it. Between snapshots, writes change chunks in place. The
// writer holds the cacher's lock; snapshots are taken under its read lock, so gen is atomic.
type index struct {
	chunks []*chunk
	gen    atomic.Uint64
	size   int
	// bytes sums the stored values' lengths, for the average object size that API Priority and
	// Fairness charges a list by.
	bytes int64
}

type chunk struct {
	// gen is the index generation the chunk was made in: the writer owns it while gen is current.
	gen   uint64
	items []*version
}

// maxChunk bounds a chunk; a full chunk splits in two halves.
const maxChunk = 512

// build replaces the index's content with versions, which are sorted by key; the index takes the
// slice over.
func (x *index) build(versions []*version) {
	x.chunks = nil
	x.size = len(versions)
	x.bytes = 0
	for _, v := range versions {
		x.bytes += int64(len(v.kv.Value))
	}
	gen := x.gen.Load()
	for len(versions) > 0 {
		n := min(len(versions), maxChunk/2)
		x.chunks = append(x.chunks, &chunk{gen: gen, items: slices.Clip(versions[:n])})
		versions = versions[n:]
	}
}

// find returns the chunk whose range holds key (the last chunk for a key after every other) and the
// position of the first item not below key in it. The index is not empty.
func (x *index) find(key string) (ci, i int, found bool) {
	ci, i = locate(x.chunks, key)
	if ci == len(x.chunks) {
		ci = len(x.chunks) - 1
		return ci, len(x.chunks[ci].items), false
	}
	return ci, i, x.chunks[ci].items[i].kv.Key == key
}

// locate returns the position of the first key not below key: its chunk and its place in it, or
// (len(chunks), 0) past the end.
func locate(chunks []*chunk, key string) (ci, i int) {
	ci = sort.Search(len(chunks), func(j int) bool {
		items := chunks[j].items
		return items[len(items)-1].kv.Key >= key
	})
	if ci == len(chunks) {
		return ci, 0
	}
	items := chunks[ci].items
	return ci, sort.Search(len(items), func(j int) bool { return items[j].kv.Key >= key })
}

// lookup returns where key is and whether it is there.
func (x *index) lookup(key string) (ci, i int, found bool) {
	if len(x.chunks) == 0 {
		return 0, 0, false
	}
	return x.find(key)
}

func (x *index) get(key string) *version {
	if ci, i, found := x.lookup(key); found {
		return x.chunks[ci].items[i]
	}
	return nil
}

// put makes v the current version of its key and returns the one it replaces, if any.
func (x *index) put(v *version) (prev *version) {
	x.bytes += int64(len(v.kv.Value))
	if len(x.chunks) == 0 {
		x.chunks = []*chunk{{gen: x.gen.Load(), items: []*version{v}}}
		x.size = 1
		return nil
	}
	ci, i, found := x.find(v.kv.Key)
	c := x.own(ci)
	if found {
		prev, c.items[i] = c.items[i], v
		x.bytes -= int64(len(prev.kv.Value))
		return prev
	}
	c.items = slices.Insert(c.items, i, v)
	x.size++
	if len(c.items) > maxChunk {
		half := len(c.items) / 2
		gen := x.gen.Load()
		left := &chunk{gen: gen, items: slices.Clone(c.items[:half])}
		right := &chunk{gen: gen, items: slices.Clone(c.items[half:])}
		x.chunks[ci] = left
		x.chunks = slices.Insert(x.chunks, ci+1, right)
	}
	return nil
}

// delete removes key and returns its version, nil if it has none.
func (x *index) delete(key string) *version {
	ci, i, found := x.lookup(key)
	if !found {
		return nil
	}
	c := x.own(ci)
	prev := c.items[i]
	c.items = slices.Delete(c.items, i, i+1)
	x.size--
	x.bytes -= int64(len(prev.kv.Value))
	if len(c.items) == 0 {
		x.chunks = slices.Delete(x.chunks, ci, ci+1)
	}
	return prev
}

// own returns chunk ci, copied first if a snapshot may share it.
func (x *index) own(ci int) *chunk {
	c := x.chunks[ci]
	gen := x.gen.Load()
	if c.gen == gen {
		return c
	}
	owned := &chunk{gen: gen, items: make([]*version, len(c.items), len(c.items)+1)}
	copy(owned.items, c.items)
	x.chunks[ci] = owned
	return owned
}

// snapshot returns the index's current content, which later writes leave alone.
func (x *index) snapshot() snapshot {
	x.gen.Add(1)
	return snapshot{chunks: slices.Clone(x.chunks)}
}

// snapshot is a read-only view of the index at one moment.
type snapshot struct {
	chunks []*chunk
}

// seek returns a cursor at the first key not below key.
func (s snapshot) seek(key string) cursor {
	ci, i := locate(s.chunks, key)
	return cursor{chunks: s.chunks, ci: ci, i: i}
}

// count returns how many keys lie in [from, to).
func (s snapshot) count(from, to string) int {
	a := s.seek(from)
	return a.distance(s.seek(to))
}

// cursor walks a snapshot in key order.
type cursor struct {
	chunks []*chunk
	ci, i  int
}

// peek returns the version at the cursor, nil past the end.
func (c *cursor) peek() *version {
	if c.ci >= len(c.chunks) {
		return nil
	}
	return c.chunks[c.ci].items[c.i]
}

// distance returns how many versions lie from c up to b, a cursor of the same snapshot not before c.
func (c cursor) distance(b cursor) int {
	if c.ci >= len(c.chunks) {
		return 0
	}
	if c.ci == b.ci {
		return b.i - c.i
	}
	n := len(c.chunks[c.ci].items) - c.i
	for ci := c.ci + 1; ci < b.ci; ci++ {
		n += len(c.chunks[ci].items)
	}
	return n + b.i
}

func (c *cursor) next() *version {
	v := c.peek()
	if v != nil {
		c.i++
		if c.i == len(c.chunks[c.ci].items) {
			c.ci, c.i = c.ci+1, 0
		}
	}
	return v
}
