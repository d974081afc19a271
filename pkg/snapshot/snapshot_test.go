package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apictl/apictl/pkg/storage/embedded"
)

// startEtcd runs a private embedded etcd in dataDir/etcd, as apictl serve does, and returns a client.
func startEtcd(t *testing.T, dataDir string) (*embedded.Server, *clientv3.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: filepath.Join(dataDir, "etcd"), Private: true, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	cl, closeClient, err := Connect(ctx, Source{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeClient(context.Background()) })
	return srv, cl
}

func put(t *testing.T, cl *clientv3.Client, n int, prefix string) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := cl.Put(context.Background(), fmt.Sprintf("/registry/%s/%d", prefix, i), "v")
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

// treeSums is every file under dir with its SHA-256, to show a directory is byte-for-byte unchanged.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		sums[p] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func TestSaveRestore(t *testing.T) {
	dataDir := t.TempDir()
	srv, cl := startEtcd(t, dataDir)
	rev := put(t, cl, 20, "before")
	snaps := filepath.Join(dataDir, "snapshots")
	info, err := Save(context.Background(), cl.Maintenance, SaveOptions{Dir: snaps, Name: "s1", ApictlVersion: "test", Endpoint: cl.Endpoints()[0]})
	if err != nil {
		t.Fatal(err)
	}
	if info.Revision != rev || info.Keys != 20 || !info.Recorded || info.ApictlVersion != "test" || info.ServerVersion == "" {
		t.Errorf("saved %+v, want revision %d, 20 keys, recorded", info, rev)
	}
	if _, err := Save(context.Background(), cl.Maintenance, SaveOptions{Dir: snaps, Name: "s1"}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("saving over s1: %v, want a refusal", err)
	}
	put(t, cl, 5, "after")

	// A running server's data dir is refused, and left alone.
	if _, err := Restore(context.Background(), RestoreOptions{File: filepath.Join(snaps, "s1"), DataDir: dataDir}); err == nil || !strings.Contains(err.Error(), "is running") {
		t.Fatalf("restore under a running etcd: %v", err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := Restore(context.Background(), RestoreOptions{File: filepath.Join(snaps, "s1"), DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if res.MovedTo == "" {
		t.Fatal("the old data was not moved aside")
	}
	if _, err := os.Stat(filepath.Join(res.MovedTo, "member")); err != nil {
		t.Errorf("the old data is not in %s: %v", res.MovedTo, err)
	}
	_, cl = startEtcd(t, dataDir)
	got, err := cl.Get(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 20 {
		t.Errorf("restored %d keys, want the 20 written before the snapshot", got.Count)
	}
	if got.Header.Revision <= embedded.RevisionBump {
		t.Errorf("revision %d after restore: not moved past the snapshot's", got.Header.Revision)
	}
	// A watch from a revision newer than the snapshot is compacted away: kube's 410 Gone.
	w := cl.Watch(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithRev(rev+3))
	if resp := <-w; resp.CompactRevision == 0 {
		t.Errorf("a watch from revision %d after restore: %+v, want it compacted", rev+3, resp)
	}
}

func TestRefusedSnapshots(t *testing.T) {
	dataDir := t.TempDir()
	srv, cl := startEtcd(t, dataDir)
	put(t, cl, 10, "x")
	good, err := Save(context.Background(), cl.Maintenance, SaveOptions{Dir: t.TempDir(), Name: "good"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good.Path)
	if err != nil {
		t.Fatal(err)
	}
	record, err := os.ReadFile(good.Path + metadataSuffix)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := append([]byte(nil), data...)
		b[at] ^= 0x40
		return b
	}
	for _, tc := range []struct {
		name    string
		content []byte
		record  []byte
		want    string
	}{
		{"empty", nil, nil, "is empty"},
		{"truncated", data[:len(data)/2], nil, "not a whole etcd snapshot"},
		{"foreign", []byte("not a snapshot at all\n"), nil, "not a whole etcd snapshot"},
		{"one byte flipped in the database", flip(len(data) / 3), nil, "is corrupt"},
		{"one byte flipped in etcd's hash", flip(len(data) - 1), nil, "is corrupt"},
		{"whole but not what was recorded", data, []byte(strings.Replace(string(record), good.SHA256, strings.Repeat("0", 64), 1)), "changed since"},
		{"a record that is not one", data, []byte("{"), "not a snapshot record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "snap")
			if err := os.WriteFile(file, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.record != nil {
				if err := os.WriteFile(file+metadataSuffix, tc.record, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := treeSums(t, dataDir)
			_, err := Restore(context.Background(), RestoreOptions{File: file, DataDir: dataDir})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("restore: %v, want an error saying %q", err, tc.want)
			}
			after := treeSums(t, dataDir)
			if len(after) != len(before) {
				t.Errorf("the data dir changed: %d files before, %d after", len(before), len(after))
			}
			for p, sum := range before {
				if after[p] != sum {
					t.Errorf("%s changed", p)
				}
			}
		})
	}
}

func TestListDeletePrune(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i, name := range []string{"on-demand-c", "on-demand-a", "scheduled-x", "on-demand-b"} {
		info := fmt.Sprintf(`{"name":%q,"created":%q,"revision":%d,"size":1,"sha256":"ab"}`, name, base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+metadataSuffix), []byte(info), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The identity saved with a snapshot goes with it.
	if err := os.MkdirAll(IdentityDir(filepath.Join(dir, "on-demand-c")), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(IdentityDir(filepath.Join(dir, "on-demand-c")), "ca.key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Left out of the listing: a temporary file and a hidden one.
	for _, name := range []string{".on-demand-d.part-1", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	names := func() string {
		list, err := List(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, s := range list {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	if got, want := names(), "on-demand-c,on-demand-a,scheduled-x,on-demand-b"; got != want {
		t.Errorf("List = %s, want %s (oldest first)", got, want)
	}
	deleted, err := Prune(dir, "on-demand-", 2)
	if err != nil || len(deleted) != 1 || deleted[0].Name != "on-demand-c" {
		t.Errorf("Prune = %v, %v; want on-demand-c deleted", deleted, err)
	}
	if err := Delete(dir, "scheduled-x"); err != nil {
		t.Fatal(err)
	}
	if got, want := names(), "on-demand-a,on-demand-b"; got != want {
		t.Errorf("after pruning and deleting: %s, want %s", got, want)
	}
	for _, tc := range []struct{ name, want string }{
		{"missing", "no snapshot named missing"},
		{"../escape", "must be a file name"},
		{"x.json", "must not start with '.' nor end in .json or .pki"},
		{"x.pki", "must not start with '.' nor end in .json or .pki"},
		{"", "must not be empty"},
	} {
		if err := Delete(dir, tc.name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Delete(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Prune(dir, "", 0); err == nil {
		t.Error("Prune with retention 0 succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "on-demand-c"+metadataSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record of a pruned snapshot is left: %v", err)
	}
	if _, err := os.Stat(IdentityDir(filepath.Join(dir, "on-demand-c"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the identity of a pruned snapshot is left: %v", err)
	}
}

// TestIdentity: the server's CAs and service-account keys are saved beside a snapshot (0600 in a
// 0700 directory), put into the cert dir of a restore, refused when that cert dir holds others,
// and deleted with the snapshot.
func TestIdentity(t *testing.T) {
	dataDir := t.TempDir()
	srv, cl := startEtcd(t, dataDir)
	put(t, cl, 3, "x")
	certDir := filepath.Join(dataDir, "pki")
	files := map[string]string{"ca.crt": "CA", "ca.key": "CAKEY", "sa.key": "SAKEY", "sa.pub": "SAPUB", "etcd/ca.crt": "ETCDCA", "apiserver.key": "not identity"}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(certDir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certDir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	snaps := t.TempDir()
	info, err := Save(context.Background(), cl.Maintenance, SaveOptions{Dir: snaps, Name: "s", CertDir: certDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"ca.crt", "ca.key", "etcd/ca.crt", "sa.key", "sa.pub"}
	if strings.Join(info.Identity, ",") != strings.Join(want, ",") {
		t.Errorf("saved identity %v, want %v", info.Identity, want)
	}
	idDir := IdentityDir(info.Path)
	if st, err := os.Stat(idDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want a directory of mode 0700", idDir, st, err)
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(idDir, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want a file of mode 0600", f, st, err)
		}
	}
	if list, err := List(snaps); err != nil || len(list) != 1 || strings.Join(list[0].Identity, ",") != strings.Join(want, ",") {
		t.Errorf("List = %+v, %v: want s alone, with its identity recorded", list, err)
	}

	// Into a new data dir: the identity lands in its cert dir.
	newDir := filepath.Join(t.TempDir(), "new")
	res, err := Restore(context.Background(), RestoreOptions{File: info.Path, DataDir: newDir, CertDir: filepath.Join(newDir, "pki")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Identity, ",") != strings.Join(want, ",") {
		t.Errorf("restored identity %v, want %v", res.Identity, want)
	}
	for _, f := range want {
		if b, err := os.ReadFile(filepath.Join(newDir, "pki", f)); err != nil || string(b) != files[f] {
			t.Errorf("restored %s: %q %v, want %q", f, b, err, files[f])
		}
	}
	if _, ok := embedded.RestoredAt(res.EtcdDir); !ok {
		t.Error("the restored etcd dir does not say when it was restored")
	}

	// Into a data dir whose cert dir has another CA: refused, nothing changed.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "pki", "ca.crt"), []byte("ANOTHER CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := treeSums(t, other)
	_, err = Restore(context.Background(), RestoreOptions{File: info.Path, DataDir: other, CertDir: filepath.Join(other, "pki")})
	if err == nil || !strings.Contains(err.Error(), "holds another server's identity than snapshot s (ca.crt differ)") {
		t.Errorf("restore over another identity: %v", err)
	}
	if after := treeSums(t, other); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the refused restore changed the data dir: %v, then %v", before, after)
	}

	if err := Delete(snaps, "s"); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(snaps); err != nil || len(entries) != 0 {
		t.Errorf("after delete the snapshot dir holds %v %v", entries, err)
	}
}
