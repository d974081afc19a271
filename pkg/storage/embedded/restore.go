package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"

	"github.com/apictl/apictl/pkg/storage/internal/zapslog"
)

// clientURLFile, in the data directory, holds the client URL of the etcd running there, so that
// another apictl process (apictl snapshot save) can reach it; it is removed when etcd stops.
const clientURLFile = "client-url"

// RevisionBump is how far a restore moves the revision past the snapshot's, with every older
// revision marked compacted: a client that saw revisions newer than the snapshot (a watch, a list
// at an exact resourceVersion) gets 410 Gone and relists, rather than meeting revisions that mean
// other writes now. etcd's documentation suggests 1,000,000,000 for restoring a kube-apiserver's etcd.
const RevisionBump = 1_000_000_000

// ErrRunning is returned by Lock when an apictl process runs an etcd in the directory.
var ErrRunning = errors.New("in use by a running apictl process")

// Lock takes the lock a running embedded etcd holds on dir, so that nothing starts on it while
// the caller works there (a restore). It fails with ErrRunning if a process holds it. A missing dir
// is not locked and needs no lock: release is a no-op then.
func Lock(dir string) (release func(), err error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	lock, err := fileutil.TryLockFile(filepath.Join(dir, lockFile), os.O_WRONLY|os.O_CREATE, 0o600)
	if errors.Is(err, fileutil.ErrLocked) {
		return nil, fmt.Errorf("%s: %w", dir, ErrRunning)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { lock.Close() }, nil
}

// Running reports whether an apictl process runs an etcd in dir, without changing anything there.
func Running(dir string) bool {
	lock, err := fileutil.TryLockFile(filepath.Join(dir, lockFile), os.O_WRONLY, 0)
	if err != nil {
		return errors.Is(err, fileutil.ErrLocked)
	}
	lock.Close()
	return false
}

// RunningClientURL returns the client URL of the embedded etcd running in dir, and false when none
// runs there (no URL file, or its lock is free: a process that crashed left the file behind).
func RunningClientURL(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, clientURLFile))
	if err != nil {
		return "", false
	}
	release, err := Lock(dir)
	if err == nil {
		release()
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// ExistingCredentials returns the client credentials of the private etcd whose data is in dir,
// without making any: ok is false when dir holds none.
func ExistingCredentials(dir string) (c Credentials, ok bool) {
	p := filepath.Join(dir, pkiDir)
	c = Credentials{CAFile: filepath.Join(p, caFile), CertFile: filepath.Join(p, clientCertFile), KeyFile: filepath.Join(p, clientKeyFile)}
	for _, f := range []string{c.CAFile, c.CertFile, c.KeyFile} {
		if _, err := os.Stat(f); err != nil {
			return Credentials{}, false
		}
	}
	return c, true
}

// Restore makes dir, which must not exist, the data directory of a new single-member embedded etcd
// holding the snapshot in file, as `apictl serve` starts it: the member's name, peer URL and cluster
// token are the ones Start uses. The revision is bumped by RevisionBump and marked compacted. The
// snapshot's integrity hash is checked; on any failure dir is removed again.
func Restore(ctx context.Context, file, dir string, logger *slog.Logger) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("restore into %s: the directory exists", dir)
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("restore %s into %s: %w", file, dir, err), os.RemoveAll(dir))
		}
	}()
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	lg := zapslog.New(logger, zapslog.Options{Level: slog.LevelWarn})
	restoredAt := time.Now()
	err = snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath:        file,
		Name:                name,
		OutputDataDir:       dir,
		PeerURLs:            []string{unusedPeerURL},
		InitialCluster:      name + "=" + unusedPeerURL,
		InitialClusterToken: initialClusterToken,
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	})
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, restoredFile), []byte(restoredAt.UTC().Format(time.RFC3339Nano)+"\n"))
}

// restoredFile, in the data directory, records when Restore made it.
const restoredFile = "restored-at"

// RestoredAt is when Restore made the data in dir; ok is false for data etcd made itself. Nothing
// written before that time (a leader election Lease renewed in the snapshot) was written by a
// process running on this data.
func RestoredAt(dir string) (at time.Time, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, restoredFile))
	if err != nil {
		return time.Time{}, false
	}
	at, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return at, err == nil
}
