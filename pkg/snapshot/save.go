package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// SaveOptions say where a snapshot goes and what is recorded with it.
type SaveOptions struct {
	// Dir is the snapshot directory, made (private to the user) if missing.
	Dir string
	// Name is the snapshot's file name in Dir; one that exists is refused.
	Name string
	// ApictlVersion and KubernetesVersion are recorded with the snapshot.
	ApictlVersion, KubernetesVersion string
	// Endpoint is the member's client URL, asked for its version when the snapshot stream does
	// not carry it (etcd sends it only with storage versions it records).
	Endpoint string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CertDir is the server's cert dir: the CAs and service-account keys found there are saved
	// beside the snapshot (IdentityDir), so that a restore keeps the server's identity. Empty saves
	// none.
	CertDir string
}

// CheckName reports what is wrong with a snapshot name, if anything: it must be a plain file name
// that List would show.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("a snapshot name must not be empty")
	case strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return fmt.Errorf("snapshot name %q must be a file name, without a directory (use --dir for where it goes)", name)
	case !isSnapshotName(name):
		return fmt.Errorf("snapshot name %q must not start with '.' nor end in %s or %s", name, metadataSuffix, identitySuffix)
	}
	return nil
}

// Save streams a snapshot from the etcd member m talks to into opts.Dir, verifies it (Verify),
// records its Info beside it and returns that Info. On any failure nothing is left in the directory.
func Save(ctx context.Context, m clientv3.Maintenance, opts SaveOptions) (_ Info, err error) {
	if err := CheckName(opts.Name); err != nil {
		return Info{}, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("making the snapshot directory: %w", err)
	}
	path := filepath.Join(opts.Dir, opts.Name)
	for _, p := range []string{path, path + metadataSuffix, IdentityDir(path)} {
		if _, err := os.Lstat(p); err == nil {
			return Info{}, fmt.Errorf("a snapshot named %s exists in %s: choose another name, or delete it first", opts.Name, opts.Dir)
		}
	}
	began := now()
	resp, err := m.SnapshotWithVersion(ctx)
	if err != nil {
		return Info{}, fmt.Errorf("asking etcd for a snapshot: %w", err)
	}
	defer resp.Snapshot.Close()
	if err := writeAtomically(path, func(w io.Writer) error {
		_, err := io.Copy(w, resp.Snapshot)
		return err
	}); err != nil {
		return Info{}, fmt.Errorf("saving the snapshot to %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	info, err := Verify(path)
	if err != nil {
		return Info{}, fmt.Errorf("checking the saved snapshot: %w", err)
	}
	info.Created = began.UTC().Truncate(time.Second)
	info.ServerVersion, info.ApictlVersion, info.KubernetesVersion = resp.Version, opts.ApictlVersion, opts.KubernetesVersion
	if info.ServerVersion == "" && opts.Endpoint != "" {
		if st, err := m.Status(ctx, opts.Endpoint); err == nil {
			info.ServerVersion = st.Version
		}
	}
	if opts.CertDir != "" {
		if info.Identity, err = saveIdentity(opts.CertDir, path); err != nil {
			return Info{}, fmt.Errorf("saving the server's identity beside the snapshot: %w", err)
		}
		defer func() {
			if err != nil {
				os.RemoveAll(IdentityDir(path))
			}
		}()
	}
	info.Recorded = true
	if err := writeAtomically(path+metadataSuffix, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}); err != nil {
		return Info{}, fmt.Errorf("recording the snapshot's details in %s: %w", path+metadataSuffix, err)
	}
	return info, nil
}
