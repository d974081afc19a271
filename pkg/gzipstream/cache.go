package gzipstream

import (
	"container/list"
	"hash/crc32"
	"hash/maphash"
	"sync"
)

// Cache holds compressed chunks by their content, the least recently used dropped first once their
// bytes pass its size. A chunk is known by its length, its CRC-32 and a 64-bit hash seeded at random
// per cache, so that no client can make a chunk of its own pass for another's.
type Cache struct {
	seed    maphash.Seed
	max     int
	mu      sync.Mutex
	size    int
	entries map[key]*list.Element
	// order holds *entry, the most recently used first.
	order list.List
}

type key struct {
	hash uint64
	crc  uint32
	n    int
}

type entry struct {
	k key
	z []byte
}

// NewCache returns a cache of at most maxBytes of compressed chunks.
func NewCache(maxBytes int) *Cache {
	return &Cache{seed: maphash.MakeSeed(), max: maxBytes, entries: map[key]*list.Element{}}
}

func (c *Cache) key(p []byte) key {
	return key{hash: maphash.Bytes(c.seed, p), crc: crc32.ChecksumIEEE(p), n: len(p)}
}

// get returns the compressed chunk of k. The bytes are never written again: they may be sent by
// several streams at once.
func (c *Cache) get(k key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).z, true
}

// add keeps a copy of z, the compressed chunk of k, dropping the least recently used beyond the
// cache's size. A chunk larger than the whole cache is not kept.
func (c *Cache) add(k key, z []byte) {
	if len(z) > c.max {
		return
	}
	kept := append([]byte(nil), z...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok {
		return // another stream compressed it meanwhile
	}
	c.entries[k] = c.order.PushFront(&entry{k: k, z: kept})
	c.size += len(kept)
	for c.size > c.max {
		e := c.order.Back()
		old := e.Value.(*entry)
		c.order.Remove(e)
		delete(c.entries, old.k)
		c.size -= len(old.z)
	}
}

// Len returns how many chunks and how many compressed bytes the cache holds.
func (c *Cache) Len() (chunks, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}
