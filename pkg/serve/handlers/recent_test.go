package handlers

import (
	"fmt"
	"testing"
	"time"
)

func TestRecentSet(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name    string
		adds    map[string]int // name -> second added, applied in name order
		ask     string
		askAt   int
		want    bool
		wantLen int
	}{
		{name: "fresh", adds: map[string]int{"a": 0}, ask: "a", askAt: 29, want: true, wantLen: 1},
		{name: "expired", adds: map[string]int{"a": 0}, ask: "a", askAt: 30, want: false, wantLen: 1},
		{name: "expired is swept by a later add", adds: map[string]int{"a": 0, "b": 31}, ask: "b", askAt: 31, want: true, wantLen: 1},
		{name: "never added", adds: map[string]int{"a": 0}, ask: "b", askAt: 1, want: false, wantLen: 1},
		{name: "full: expired swept before the oldest goes", adds: map[string]int{"a": 0, "b": 40, "c": 41, "d": 42}, ask: "b", askAt: 42, want: true, wantLen: 3},
		{name: "full of fresh: the oldest goes", adds: map[string]int{"a": 10, "b": 11, "c": 12, "d": 13}, ask: "a", askAt: 13, want: false, wantLen: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecentSet(30*time.Second, 3)
			for _, n := range []string{"a", "b", "c", "d"} {
				if sec, ok := tt.adds[n]; ok {
					s.add(n, at(sec))
				}
			}
			if got := s.has(tt.ask, at(tt.askAt)); got != tt.want {
				t.Errorf("has(%q) = %v, want %v", tt.ask, got, tt.want)
			}
			if got := s.len(); got != tt.wantLen {
				t.Errorf("len = %d, want %d", got, tt.wantLen)
			}
		})
	}
}

// TestRecentSetStaysBounded deletes far more namespaces than the set holds, as a server that creates
// and deletes namespaces all day does.
func TestRecentSetStaysBounded(t *testing.T) {
	s := newRecentSet(namespaceLiveLookupTTL, recentlyDeletedMax)
	now := time.Now()
	for i := range 100_000 {
		// Some names come back, as test namespaces do.
		s.add(fmt.Sprintf("ns-%d", i%50_000), now.Add(time.Duration(i)*time.Millisecond))
	}
	if s.len() > recentlyDeletedMax || len(s.order) > 2*recentlyDeletedMax {
		t.Fatalf("the set holds %d names in %d entries, more than %d", s.len(), len(s.order), recentlyDeletedMax)
	}
}
