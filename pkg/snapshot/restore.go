package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/apictl/apictl/pkg/join"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

// RestoreOptions say what to restore where.
type RestoreOptions struct {
	// File is the snapshot.
	File string
	// DataDir is `apictl serve`'s --data-dir; the embedded etcd's data is DataDir/etcd.
	DataDir string
	// CertDir is `apictl serve`'s --cert-dir, where the identity saved with the snapshot goes.
	CertDir string
	// Now is the clock, for the name the old data is moved to; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Snapshot Info
	// EtcdDir holds the restored member; MovedTo is where the etcd data that was there went ("" if
	// there was none).
	EtcdDir, MovedTo string
	// Identity lists the CAs and keys saved with the snapshot that are now in the cert dir; none
	// when the snapshot was saved without them.
	Identity []string
}

// Restore makes the snapshot opts.File the embedded etcd's data in opts.DataDir, as k3s's
// --cluster-reset-restore-path does: the snapshot is verified first (Verify), restored into a new
// directory beside the old one, and only then is the old data moved aside to etcd-old-<time>, never
// deleted. The etcd's client credentials are kept. The server's identity saved with the snapshot
// goes into the cert dir; one that holds another identity is refused, as is a server running on the
// data dir. Everything is checked before anything is written; on any failure the data dir is as it
// was.
func Restore(ctx context.Context, opts RestoreOptions) (RestoreResult, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if err := embedded.CheckDir(opts.DataDir, "--data-dir"); err != nil {
		return RestoreResult{}, err
	}
	info, err := Verify(opts.File)
	if err != nil {
		return RestoreResult{}, err
	}
	identity, err := readIdentity(opts.File)
	if err != nil {
		return RestoreResult{}, err
	}
	if len(identity) > 0 {
		if opts.CertDir == "" {
			return RestoreResult{}, errors.New("the snapshot carries the server's CAs and keys: give the --cert-dir to put them in")
		}
		if err := embedded.CheckDir(opts.CertDir, "--cert-dir"); err != nil {
			return RestoreResult{}, err
		}
		if err := checkIdentity(opts.CertDir, info.Name, identity); err != nil {
			return RestoreResult{}, err
		}
	}
	res := RestoreResult{Snapshot: info, EtcdDir: filepath.Join(opts.DataDir, "etcd")}
	release, err := embedded.Lock(res.EtcdDir)
	if errors.Is(err, embedded.ErrRunning) {
		return res, fmt.Errorf("apictl serve is running on --data-dir %s: stop it, then restore", opts.DataDir)
	}
	if err != nil {
		return res, err
	}
	defer release()
	stamp := now().UTC().Format("20060102T150405Z")
	staging := filepath.Join(opts.DataDir, ".etcd-restore-"+stamp)
	if err := embedded.Restore(ctx, opts.File, staging, opts.Logger); err != nil {
		return res, err
	}
	if err := os.Chmod(staging, 0o700); err != nil { // etcd's data dir is the owner's alone
		return res, errors.Join(err, os.RemoveAll(staging))
	}
	if err := copyDir(filepath.Join(res.EtcdDir, "pki"), filepath.Join(staging, "pki")); err != nil {
		return res, errors.Join(fmt.Errorf("keeping the etcd's credentials: %w", err), os.RemoveAll(staging))
	}
	if _, err := os.Stat(res.EtcdDir); err == nil {
		res.MovedTo = filepath.Join(opts.DataDir, "etcd-old-"+stamp)
		if err := os.Rename(res.EtcdDir, res.MovedTo); err != nil {
			return res, errors.Join(fmt.Errorf("moving the old etcd data aside: %w", err), os.RemoveAll(staging))
		}
	}
	if err := os.Rename(staging, res.EtcdDir); err != nil {
		err = fmt.Errorf("putting the restored data in place: %w", err)
		if res.MovedTo != "" {
			err = errors.Join(err, os.Rename(res.MovedTo, res.EtcdDir))
		}
		return res, errors.Join(err, os.RemoveAll(staging))
	}
	if len(identity) > 0 {
		// checkIdentity found nothing that differs: nothing is moved aside, only missing files are added.
		if _, err := join.WriteShared(opts.CertDir, identity, now()); err != nil {
			return res, fmt.Errorf("the etcd data is restored, but putting the snapshot's CAs and keys in --cert-dir %s failed: %w", opts.CertDir, err)
		}
		res.Identity = sortedNames(identity)
	}
	return res, nil
}

// copyDir copies the regular files of src into dst (made 0700), each readable by the owner only. A
// missing src copies nothing.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
