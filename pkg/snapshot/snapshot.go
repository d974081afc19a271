// Package snapshot saves, verifies, lists, prunes and restores snapshots of the etcd `apictl serve`
// stores its objects in, with etcd's maintenance API and etcdutl, as k3s does for its embedded etcd.
//
// A snapshot is two files in a directory: NAME, the database exactly as etcd streamed it (with the
// SHA-256 etcd appends), and NAME.json, what was recorded when it was saved (Info); beside them
// NAME.pki holds the server's CAs and service-account keys (IdentityDir). Each is written to a
// temporary name and renamed, the record last, so that a directory never holds half a snapshot.
package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// Info describes a saved snapshot.
type Info struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Revision is the newest etcd revision the snapshot holds: every write acknowledged at or before
	// it is in the snapshot.
	Revision int64 `json:"revision"`
	// Keys is how many keys the snapshot holds at that revision.
	Keys int `json:"keys"`
	// Size and SHA256 are the file's, as written.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// EtcdVersion is the storage version etcd recorded in the database; ServerVersion is the etcd
	// server's version when it was taken.
	EtcdVersion   string `json:"etcdVersion,omitempty"`
	ServerVersion string `json:"etcdServerVersion,omitempty"`
	// ApictlVersion and KubernetesVersion are the apictl that saved it.
	ApictlVersion     string `json:"apictlVersion,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Identity lists the server's CAs and service-account keys saved with the snapshot, in
	// IdentityDir, by their paths in the cert dir; none for a snapshot saved without them.
	Identity []string `json:"identity,omitempty"`
	// Path is where the snapshot is; not recorded, as the files may be moved.
	Path string `json:"-"`
	// Recorded is false for a file without its NAME.json (copied in by hand): only Name, Path, Size
	// and Created (the file's modification time) are known.
	Recorded bool `json:"-"`
}

// metadataSuffix names the file recorded beside a snapshot.
const metadataSuffix = ".json"

// etcdHashSize is the SHA-256 etcd appends to a snapshot it streams; the database before it is a
// multiple of 512 bytes.
const etcdHashSize = sha256.Size

// Verify checks that file is a whole etcd snapshot, unchanged since it was saved, and describes it:
// its size leaves room for etcd's appended SHA-256 and that hash matches the database, the SHA-256
// recorded beside it (if any) matches the file, and bbolt's own consistency check passes. Each
// failure says what is wrong with the file; nothing is written.
func Verify(file string) (Info, error) {
	info := Info{Name: filepath.Base(file), Path: file}
	st, err := os.Stat(file)
	if err != nil {
		return info, fmt.Errorf("reading snapshot %s: %w", file, err)
	}
	if !st.Mode().IsRegular() {
		return info, fmt.Errorf("snapshot %s is not a regular file", file)
	}
	info.Size, info.Created = st.Size(), st.ModTime().UTC()
	if info.Size == 0 {
		return info, fmt.Errorf("snapshot %s is empty: not an etcd snapshot (use a file written by apictl snapshot save or etcdctl snapshot save)", file)
	}
	if info.Size%512 != etcdHashSize {
		return info, fmt.Errorf("snapshot %s is not a whole etcd snapshot: its size (%d bytes) is not a database plus the SHA-256 etcd appends; the file is truncated or not a snapshot", file, info.Size)
	}
	whole, dbHash, tail, err := hashes(file, info.Size)
	if err != nil {
		return info, err
	}
	info.SHA256 = whole
	if !bytes.Equal(dbHash, tail) {
		return info, fmt.Errorf("snapshot %s is corrupt: its database does not match the SHA-256 etcd wrote at its end (the file was changed or damaged)", file)
	}
	if rec, ok, err := readMetadata(file); err != nil {
		return info, err
	} else if ok {
		if rec.SHA256 != whole || rec.Size != info.Size {
			return info, fmt.Errorf("snapshot %s does not match what %s recorded when it was saved (SHA-256 %s, %d bytes; the file has %s, %d bytes): the file changed since",
				file, filepath.Base(file)+metadataSuffix, rec.SHA256, rec.Size, whole, info.Size)
		}
		rec.Name, rec.Path, rec.Recorded = info.Name, file, true
		info = rec
	}
	status, err := status(file)
	if err != nil {
		return info, fmt.Errorf("snapshot %s: etcd's check of its database failed: %w", file, err)
	}
	info.Revision, info.Keys, info.EtcdVersion = status.Revision, status.TotalKey, status.Version
	return info, nil
}

// hashes reads file once: the SHA-256 of the whole file (hex), of the database before etcd's hash,
// and the hash etcd appended.
func hashes(file string, size int64) (whole string, db, tail []byte, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", nil, nil, fmt.Errorf("reading snapshot %s: %w", file, err)
	}
	defer f.Close()
	all, part := sha256.New(), sha256.New()
	if _, err := io.Copy(io.MultiWriter(all, part), io.LimitReader(f, size-etcdHashSize)); err != nil {
		return "", nil, nil, fmt.Errorf("reading snapshot %s: %w", file, err)
	}
	tail = make([]byte, etcdHashSize)
	if _, err := io.ReadFull(f, tail); err != nil {
		return "", nil, nil, fmt.Errorf("reading snapshot %s: %w", file, err)
	}
	all.Write(tail)
	return hex.EncodeToString(all.Sum(nil)), part.Sum(nil), tail, nil
}

// status is etcdutl's reading of a snapshot's database. bbolt panics on some damage that its
// check does not catch first; that becomes an error too.
func status(file string) (st snapshot.Status, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the database is damaged: %v", r)
		}
	}()
	return snapshot.NewV3(zap.NewNop()).Status(file)
}

// readMetadata reads what was recorded beside file; ok is false when nothing was.
func readMetadata(file string) (Info, bool, error) {
	b, err := os.ReadFile(file + metadataSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("reading %s: %w", file+metadataSuffix, err)
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, false, fmt.Errorf("reading %s: not a snapshot record (%w); delete it to use the snapshot without one", file+metadataSuffix, err)
	}
	return info, true, nil
}

// writeAtomically writes data to path through a temporary file in the same directory, synced
// before it is renamed.
func writeAtomically(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// isSnapshotName reports whether a directory entry's name is a snapshot's rather than a record, a
// temporary file or something hidden.
func isSnapshotName(name string) bool {
	return !strings.HasPrefix(name, ".") && !strings.HasSuffix(name, metadataSuffix) && !strings.HasSuffix(name, identitySuffix)
}
