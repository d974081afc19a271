package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apictl/apictl/pkg/join"
)

// identitySuffix names the directory beside a snapshot that holds the saved server's identity: the
// files every member of a cluster shares (join.SharedFiles: the cluster, front-proxy and etcd CAs
// with their keys, and the service-account signing key), each 0600 in a 0700 directory, as the
// snapshot, which holds every Secret, is. A server restored with them trusts the kubeconfigs and
// service-account tokens of the one that was saved, and its kube-root-ca.crt ConfigMaps are right.
const identitySuffix = ".pki"

// IdentityDir is where the identity saved with the snapshot at path is kept.
func IdentityDir(path string) string { return path + identitySuffix }

// saveIdentity copies the identity files present in certDir beside the snapshot at path, through a
// temporary directory renamed into place; it returns the files it saved (none: nothing is written).
func saveIdentity(certDir, path string) ([]string, error) {
	files, err := join.ReadShared(certDir)
	if err != nil {
		return nil, fmt.Errorf("reading the server's CAs and service-account keys in %s: %w", certDir, err)
	}
	if len(files) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(IdentityDir(path))+".part-*")
	if err != nil {
		return nil, err
	}
	if _, err := join.WriteShared(tmp, files, time.Now()); err != nil {
		return nil, errors.Join(err, os.RemoveAll(tmp))
	}
	if err := os.Rename(tmp, IdentityDir(path)); err != nil {
		return nil, errors.Join(err, os.RemoveAll(tmp))
	}
	return sortedNames(files), nil
}

// readIdentity reads the identity saved beside the snapshot at path; none (a snapshot saved without
// one) is an empty map.
func readIdentity(path string) (map[string][]byte, error) {
	dir := IdentityDir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	files, err := join.ReadShared(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the CAs and service-account keys saved with the snapshot in %s: %w", dir, err)
	}
	return files, nil
}

// checkIdentity refuses a cert dir that holds another identity than the snapshot's: a restore would
// otherwise serve the snapshot's objects (its tokens' Secrets, its kube-root-ca.crt) under CAs that
// did not make them, or overwrite the CAs of a running cluster.
func checkIdentity(certDir, snapshotName string, files map[string][]byte) error {
	if differ := join.Differing(certDir, files); len(differ) > 0 {
		return fmt.Errorf("--cert-dir %s holds another server's identity than snapshot %s (%s differ): restore into a new --data-dir, or move %s aside to take the snapshot's",
			certDir, snapshotName, strings.Join(differ, ", "), certDir)
	}
	return nil
}

func sortedNames(files map[string][]byte) []string {
	var out []string
	for _, f := range join.SharedFiles() {
		if _, ok := files[f]; ok {
			out = append(out, f)
		}
	}
	return out
}
