package handlers

import (
	"sync"
	"time"
)

// recentSet remembers names for a while, bounded in time and in size, as kube's NamespaceLifecycle
// admission remembers namespaces it saw deleted (an expiring LRU of 4,096 entries): a server that
// deletes namespaces all day must not remember every one it ever deleted.
type recentSet struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	added map[string]time.Time
	// order holds the adds oldest first; an entry whose name was added again later is stale and is
	// skipped when it reaches the front. Adds come in time order, so the front is the oldest.
	order []recentEntry
}

type recentEntry struct {
	name string
	at   time.Time
}

func newRecentSet(ttl time.Duration, max int) *recentSet {
	return &recentSet{ttl: ttl, max: max, added: map[string]time.Time{}}
}

// add remembers name from now on, forgetting expired names and, past the size bound, the oldest.
func (s *recentSet) add(name string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.added[name] = now
	s.order = append(s.order, recentEntry{name, now})
	for len(s.order) > 0 {
		front := s.order[0]
		current, ok := s.added[front.name]
		stale := !ok || !current.Equal(front.at)
		if !stale && now.Sub(front.at) < s.ttl && len(s.added) <= s.max {
			break
		}
		if !stale {
			delete(s.added, front.name)
		}
		s.order[0] = recentEntry{}
		s.order = s.order[1:]
	}
	// Re-added names leave stale entries behind; compact rather than let them pile up.
	if len(s.order) > 2*s.max {
		kept := make([]recentEntry, 0, len(s.added))
		for _, e := range s.order {
			if at, ok := s.added[e.name]; ok && at.Equal(e.at) {
				kept = append(kept, e)
			}
		}
		s.order = kept
	}
}

// has reports whether name was added less than the set's ttl before now.
func (s *recentSet) has(name string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.added[name]
	return ok && now.Sub(at) < s.ttl
}

// len is the number of names held, expired ones included until an add sweeps them.
func (s *recentSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.added)
}
