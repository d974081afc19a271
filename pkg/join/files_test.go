package join

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

func TestSharedFiles(t *testing.T) {
	pub, err := filepath.Rel("/d", certs.ServiceAccountPubPath("/d"))
	if err != nil {
		t.Fatal(err)
	}
	if pub != "sa.pub" {
		t.Fatalf("certs.ServiceAccountPubPath names %q; this test expects sa.pub", pub)
	}
	want := []string{"ca.crt", "ca.key", "etcd/ca.crt", "etcd/ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.key", "sa.pub"}
	got := slices.Sorted(slices.Values(SharedFiles()))
	if !slices.Equal(got, want) {
		t.Errorf("SharedFiles() = %v, want %v", got, want)
	}
}

// writeTree writes files, by slash path relative to dir, mode 0600.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every regular file under dir, by slash path relative to it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTrees(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

func TestReadShared(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"ca.crt": []byte("ca cert"), "ca.key": []byte("ca key"), "etcd/ca.crt": []byte("etcd ca"), "sa.pub": []byte("sa pub"),
		// Not shared: each member has its own.
		"apiserver.crt": []byte("leaf"), "apiserver.key": []byte("leaf key"), "etcd/peer.key": []byte("peer key"),
	})
	got, err := ReadShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"ca.crt": []byte("ca cert"), "ca.key": []byte("ca key"), "etcd/ca.crt": []byte("etcd ca"), "sa.pub": []byte("sa pub")}
	if !equalTrees(got, want) {
		t.Errorf("ReadShared = %q, want %q", got, want)
	}

	if got, err := ReadShared(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("ReadShared of a missing dir = %q, %v; want nothing", got, err)
	}

	// An unreadable shared file is an error, not a missing one.
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "ca.key"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadShared(bad); err == nil {
		t.Errorf("ReadShared with a directory as ca.key = %q, want an error", got)
	}
}

func TestWriteSharedRefusesOtherNames(t *testing.T) {
	for _, name := range []string{"../evil", "apiserver.key", "/etc/passwd", "etcd/../ca.key", "etcd/peer.key", "CA.crt", ""} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "certs")
			files := map[string][]byte{"ca.crt": []byte("ca"), name: []byte("evil")}
			moved, err := WriteShared(dir, files, time.Now())
			if err == nil {
				t.Fatalf("WriteShared took %q", name)
			}
			if !strings.Contains(err.Error(), "not one of the cluster's shared files") {
				t.Errorf("WriteShared: %q", err)
			}
			if moved != "" {
				t.Errorf("moved = %q", moved)
			}
			if got := readTree(t, parent); len(got) != 0 {
				t.Errorf("WriteShared wrote %q", slices.Sorted(maps.Keys(got)))
			}
		})
	}
}

func TestWriteShared(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 4, 5, 0, time.FixedZone("CET", 3600))
	shared := map[string][]byte{
		"ca.crt": []byte("ca cert"), "ca.key": []byte("ca key"),
		"etcd/ca.crt": []byte("etcd ca"), "etcd/ca.key": []byte("etcd ca key"),
		"sa.key": []byte("sa key"), "sa.pub": []byte("sa pub"),
	}

	t.Run("empty dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "certs")
		moved, err := WriteShared(dir, shared, now)
		if err != nil || moved != "" {
			t.Fatalf("WriteShared = %q, %v", moved, err)
		}
		if got := readTree(t, dir); !equalTrees(got, shared) {
			t.Errorf("dir holds %q, want %q", got, shared)
		}
		for name := range shared {
			fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			if mode := fi.Mode().Perm(); mode != 0o600 {
				t.Errorf("%s: mode %v, want 0600", name, mode)
			}
		}
	})

	t.Run("same bytes", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "certs")
		existing := maps.Clone(shared)
		existing["apiserver.crt"] = []byte("own leaf")
		writeTree(t, dir, existing)
		moved, err := WriteShared(dir, shared, now)
		if err != nil || moved != "" {
			t.Fatalf("WriteShared = %q, %v; want nothing moved", moved, err)
		}
		if got := readTree(t, dir); !equalTrees(got, existing) {
			t.Errorf("dir holds %q, want %q", got, existing)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Errorf("parent holds %d entries, want the cert dir only", len(entries))
		}
	})

	t.Run("subset present", func(t *testing.T) {
		// A dir that holds some of the files, with the same bytes, only gains the others.
		dir := filepath.Join(t.TempDir(), "certs")
		writeTree(t, dir, map[string][]byte{"ca.crt": shared["ca.crt"]})
		moved, err := WriteShared(dir, shared, now)
		if err != nil || moved != "" {
			t.Fatalf("WriteShared = %q, %v; want nothing moved", moved, err)
		}
		if got := readTree(t, dir); !equalTrees(got, shared) {
			t.Errorf("dir holds %q, want %q", got, shared)
		}
	})

	t.Run("different bytes", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "certs")
		old := map[string][]byte{
			"ca.crt": []byte("ca cert"), "ca.key": []byte("ca key"),
			"etcd/ca.crt": []byte("OTHER etcd ca"), "etcd/ca.key": []byte("OTHER etcd ca key"),
			"apiserver.crt": []byte("leaf of the old CA"), "apiserver.key": []byte("leaf key"),
		}
		writeTree(t, dir, old)
		moved, err := WriteShared(dir+string(filepath.Separator), shared, now)
		if err != nil {
			t.Fatal(err)
		}
		wantMoved := filepath.Join(parent, "certs-old-20261126T140405Z")
		if moved != wantMoved {
			t.Errorf("moved = %q, want %q", moved, wantMoved)
		}
		if got := readTree(t, wantMoved); !equalTrees(got, old) {
			t.Errorf("moved dir holds %q, want the old files unchanged: %q", got, old)
		}
		// No leaf of the old CAs stays beside the new ones.
		if got := readTree(t, dir); !equalTrees(got, shared) {
			t.Errorf("dir holds %q, want only %q", got, shared)
		}
	})
}
