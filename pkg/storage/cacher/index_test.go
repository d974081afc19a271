package cacher

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
)

func keysOfSnapshot(s snapshot, prefix string) []string {
	var keys []string
	for v := range s.ascend(prefix) {
		keys = append(keys, v.kv.Key)
	}
	return keys
}

// The index agrees with a map at every step of random puts and deletes, across chunk splits, and a
// snapshot keeps what it saw while the index changes under it.
func TestIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x index
	want := map[string]int64{}
	var snaps []snapshot
	var snapWants [][]string
	sortedKeys := func() []string {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys
	}
	for step := range 20000 {
		key := fmt.Sprintf("configmaps/ns%d/k%04d", rng.IntN(3), rng.IntN(1500))
		if rng.IntN(3) == 0 {
			prev := x.delete(key)
			if _, ok := want[key]; ok != (prev != nil) {
				t.Fatalf("step %d: delete %s returned %v, present %v", step, key, prev, ok)
			}
			delete(want, key)
		} else {
			prev := x.put(newVersion(storage.KeyValue{Key: key, ModRevision: int64(step), Value: make([]byte, step%7)}))
			if old, ok := want[key]; ok != (prev != nil) || ok && prev.kv.ModRevision != old {
				t.Fatalf("step %d: put %s replaced %v, want revision %d (present %v)", step, key, prev, old, ok)
			}
			want[key] = int64(step)
		}
		if step%1000 == 0 {
			snaps = append(snaps, x.snapshot())
			snapWants = append(snapWants, sortedKeys())
		}
	}
	got := keysOfSnapshot(x.snapshot(), "configmaps/")
	if !slices.Equal(got, sortedKeys()) || x.size != len(want) {
		t.Fatalf("index holds %d keys (size %d), want %d", len(got), x.size, len(want))
	}
	var bytes int64
	for _, rev := range want {
		bytes += rev % 7
	}
	if x.bytes != bytes {
		t.Errorf("index counts %d bytes, want %d", x.bytes, bytes)
	}
	for i, s := range snaps {
		if got := keysOfSnapshot(s, "configmaps/"); !slices.Equal(got, snapWants[i]) {
			t.Fatalf("snapshot %d changed: %d keys, want %d", i, len(got), len(snapWants[i]))
		}
	}
	for _, c := range x.chunks {
		if len(c.items) == 0 || len(c.items) > maxChunk {
			t.Fatalf("chunk of %d items", len(c.items))
		}
	}
	for k, rev := range want {
		if v := x.get(k); v == nil || v.kv.ModRevision != rev {
			t.Fatalf("get %s = %v, want revision %d", k, v, rev)
		}
	}
	if x.get("configmaps/none") != nil {
		t.Error("get of a missing key found something")
	}

	// Ranges and counts by prefix.
	s := x.snapshot()
	for ns := range 3 {
		prefix := fmt.Sprintf("configmaps/ns%d/", ns)
		var wantKeys []string
		for _, k := range sortedKeys() {
			if strings.HasPrefix(k, prefix) {
				wantKeys = append(wantKeys, k)
			}
		}
		if got := keysOfSnapshot(s, prefix); !slices.Equal(got, wantKeys) {
			t.Errorf("%s: %d keys, want %d", prefix, len(got), len(wantKeys))
		}
		if got := s.count(prefix, prefixEnd(prefix)); got != len(wantKeys) {
			t.Errorf("count %s = %d, want %d", prefix, got, len(wantKeys))
		}
	}
}

func TestIndexBuild(t *testing.T) {
	var versions []*version
	for i := range 1000 {
		versions = append(versions, newVersion(storage.KeyValue{Key: fmt.Sprintf("k%04d", i)}))
	}
	var x index
	x.build(versions)
	s := x.snapshot()
	// Writes after a build leave both the built content and the snapshot consistent.
	x.put(newVersion(storage.KeyValue{Key: "k0500a"}))
	x.delete("k0000")
	if got := s.count("k", "l"); got != 1000 {
		t.Errorf("snapshot count %d, want 1000", got)
	}
	if got := x.snapshot().count("k", "l"); got != 1000 || x.size != 1000 {
		t.Errorf("index count %d (size %d), want 1000", got, x.size)
	}
}

func TestWindow(t *testing.T) {
	w := newWindow(4)
	w.oldest = 10
	for rev := int64(11); rev <= 16; rev++ {
		w.push(&change{rev: rev})
	}
	if w.first() != 2 || w.head != 6 || w.oldest != 12 {
		t.Fatalf("first %d, head %d, oldest %d; want 2, 6, 12", w.first(), w.head, w.oldest)
	}
	for _, tc := range []struct {
		rev  int64
		seq  uint64
		want bool
	}{{11, 0, false}, {12, 2, true}, {14, 4, true}, {16, 6, true}, {20, 6, true}} {
		seq, ok := w.after(tc.rev)
		if ok != tc.want || ok && seq != tc.seq {
			t.Errorf("after(%d) = %d, %v; want %d, %v", tc.rev, seq, ok, tc.seq, tc.want)
		}
	}
	// A reset: the history before it is not searched, and its revisions do not count as evicted.
	w.push(&change{rev: 16, reset: true})
	w.restart(5)
	w.push(&change{rev: 6})
	w.push(&change{rev: 7})
	w.push(&change{rev: 8})
	if w.oldest != 5 {
		t.Errorf("oldest after the reset %d, want 5", w.oldest)
	}
	if seq, ok := w.after(6); !ok || w.at(seq).rev != 7 {
		t.Errorf("after(6) past a reset = %d, %v; want the change at 7", seq, ok)
	}
}
