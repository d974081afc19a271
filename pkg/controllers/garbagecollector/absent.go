package garbagecollector

import "k8s.io/utils/lru"

// absentOwners is the number of owners found absent that the collector remembers, as kube's.
const absentOwners = 500

// absentCache remembers owners found absent (kube's absentOwnerCache), so that the thousand
// dependents of one deleted owner cost one lookup of it, not a thousand.
type absentCache struct {
	cache *lru.Cache
}

func newAbsentCache() *absentCache { return &absentCache{cache: lru.New(absentOwners)} }

func (c *absentCache) add(id identity) { c.cache.Add(id, nil) }

func (c *absentCache) has(id identity) bool {
	_, ok := c.cache.Get(id)
	return ok
}
