package join

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apictl/apictl/pkg/certs"
)

// SharedFiles are the cert dir's files every member of a cluster has the same, by path relative to
// the cert dir: the CAs that sign serving, client, front-proxy and etcd peer certificates, and the
// service-account key. With them a kubeconfig and a service-account token of one member work on
// every member, and each member signs its own leaves.
func SharedFiles() []string {
	var out []string
	for _, name := range []string{certs.NameCA, certs.NameFrontProxyCA, certs.NameEtcdCA} {
		out = append(out, rel(certs.CertPath("", name)), rel(certs.KeyPath("", name)))
	}
	return append(out, rel(certs.ServiceAccountKeyPath("")), rel(certs.ServiceAccountPubPath("")))
}

func rel(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// ReadShared reads the shared files present in certDir.
func ReadShared(certDir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range SharedFiles() {
		b, err := os.ReadFile(filepath.Join(certDir, filepath.FromSlash(f)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[f] = b
	}
	return out, nil
}

// WriteShared writes a joiner's copy of the cluster's shared files into certDir. Only the paths of
// SharedFiles are taken. When certDir already holds different versions of them (the joiner ran
// alone before), the whole directory is first moved aside to <certDir>-old-<time>, so that nothing
// is lost and no leaf signed by the old CAs stays; moved is that directory, or "".
func WriteShared(certDir string, files map[string][]byte, now time.Time) (moved string, err error) {
	allowed := SharedFiles()
	for name := range files {
		if !slices.Contains(allowed, name) {
			return "", fmt.Errorf("the member sent %q, which is not one of the cluster's shared files", name)
		}
	}
	if len(Differing(certDir, files)) > 0 {
		moved = fmt.Sprintf("%s-old-%s", filepath.Clean(certDir), now.UTC().Format("20060102T150405Z"))
		if err := os.Rename(certDir, moved); err != nil {
			return "", fmt.Errorf("moving the cert dir %s aside: %w", certDir, err)
		}
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(certDir, filepath.FromSlash(name)), data); err != nil {
			return moved, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return moved, nil
}

// Differing names the files of files that certDir holds with other contents, sorted.
func Differing(certDir string, files map[string][]byte) []string {
	var out []string
	for name, data := range files {
		old, err := os.ReadFile(filepath.Join(certDir, filepath.FromSlash(name)))
		if err == nil && !bytes.Equal(old, data) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
