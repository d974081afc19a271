package certs

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// NameServiceAccount is the service-account signing key pair, sa.key and sa.pub, as kubeadm names
// it: kube-apiserver signs tokens with sa.key (--service-account-signing-key-file) and verifies them
// with sa.pub (--service-account-key-file). It is a bare key pair, with no certificate.
const NameServiceAccount = "sa"

const pubExt = ".pub"

// ServiceAccountKeyPath and ServiceAccountPubPath are where the pair lives in dir.
func ServiceAccountKeyPath(dir string) string { return KeyPath(dir, NameServiceAccount) }

// ServiceAccountPubPath is the public half of the service-account pair.
func ServiceAccountPubPath(dir string) string {
	return filepath.Join(dir, NameServiceAccount+pubExt)
}

// serviceAccountAlgorithm is the algorithm of a new service-account key: the PKI's, except
// Ed25519, which kube cannot sign tokens with (it signs RS256 and ES256/384/512); then RSA-2048,
// kubeadm's.
func serviceAccountAlgorithm(alg KeyAlgorithm) KeyAlgorithm {
	if alg == Ed25519 {
		return RSA2048
	}
	return alg
}

// encodePublicKey is a public key as PKIX PEM ("PUBLIC KEY"), as kubeadm writes sa.pub.
func encodePublicKey(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// parsePublicKeyPEM reads the first PUBLIC KEY block of data.
func parsePublicKeyPEM(data []byte) (crypto.PublicKey, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "PUBLIC KEY" {
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("holds a damaged PUBLIC KEY: %w", err)
			}
			return pub, nil
		}
	}
	return nil, errors.New("holds no PEM public key (-----BEGIN PUBLIC KEY-----)")
}

// publicKeysEqual compares two public keys.
func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// storedServiceAccount is what the cert dir holds of the pair.
type storedServiceAccount struct {
	keyPath, pubPath string
	keyPEM, pubPEM   []byte
	key              crypto.Signer
	pub              crypto.PublicKey
	keyErr, pubErr   error
}

func loadServiceAccount(dir string) (*storedServiceAccount, error) {
	s := &storedServiceAccount{keyPath: ServiceAccountKeyPath(dir), pubPath: ServiceAccountPubPath(dir)}
	var err error
	if s.keyPEM, err = readOptional(s.keyPath); err != nil {
		return nil, err
	}
	if s.pubPEM, err = readOptional(s.pubPath); err != nil {
		return nil, err
	}
	if s.keyPEM != nil {
		if s.key, err = parseKeyPEM(s.keyPEM); err != nil {
			s.key, s.keyErr = nil, fmt.Errorf("%s %w", s.keyPath, err)
		}
	}
	if s.pubPEM != nil {
		if s.pub, err = parsePublicKeyPEM(s.pubPEM); err != nil {
			s.pubErr = fmt.Errorf("%s %w", s.pubPath, err)
		}
	}
	return s, nil
}

// rotationNote says what replacing the service-account key does to the tokens already issued.
func rotationNote(dir string) string {
	return fmt.Sprintf("tokens signed by the old key stop verifying: keep them valid during a rotation by passing the old public key too, "+
		"with an extra --service-account-key-file (a copy of the old %s)", ServiceAccountPubPath(dir))
}

// ensureServiceAccount keeps a matching sa.key/sa.pub pair, creates a missing one, and writes a
// missing sa.pub from sa.key. A pub without its key, or a pair that does not match, is an error: a
// new key would silently invalidate every token issued.
func (r *run) ensureServiceAccount(ctx context.Context, alg KeyAlgorithm) error {
	s, err := loadServiceAccount(r.dir)
	if err != nil {
		return err
	}
	switch {
	case s.keyErr != nil:
		return fmt.Errorf("%w: restore it, or create a new pair with apictl certs renew sa (%s)", s.keyErr, rotationNote(r.dir))
	case s.pubErr != nil && s.key != nil:
		return r.writeServiceAccount(s, s.key, false, "public key rewritten from "+s.keyPath)
	case s.pubErr != nil:
		return s.pubErr
	case s.keyPEM == nil && s.pubPEM != nil:
		return fmt.Errorf("%s exists without %s: restore the private key, or create a new pair with apictl certs renew sa (%s)",
			s.pubPath, s.keyPath, rotationNote(r.dir))
	case s.keyPEM == nil:
		if err := ctx.Err(); err != nil {
			return err
		}
		key, err := generateKey(serviceAccountAlgorithm(alg))
		if err != nil {
			return fmt.Errorf("creating the key of %s: %w", s.keyPath, err)
		}
		return r.writeServiceAccount(s, key, true, "")
	case s.pubPEM == nil:
		return r.writeServiceAccount(s, s.key, false, "")
	case !publicKeysEqual(s.key.Public(), s.pub):
		return fmt.Errorf("%s does not match %s (key mismatch): restore the right files, or create a new pair with apictl certs renew sa (%s)",
			s.pubPath, s.keyPath, rotationNote(r.dir))
	}
	r.record(NameServiceAccount, s.keyPath, KindKey, ActionKept, "", nil)
	r.record(NameServiceAccount, s.pubPath, KindPublicKey, ActionKept, "", nil)
	return nil
}

// writeServiceAccount plans the pair's files: the key (when newKey) first, then the public key.
func (r *run) writeServiceAccount(s *storedServiceAccount, key crypto.Signer, newKey bool, reason string) error {
	pubPEM, err := encodePublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encoding %s: %w", s.pubPath, err)
	}
	if newKey {
		keyPEM, err := encodeKey(key)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", s.keyPath, err)
		}
		r.files.add(s.keyPath, keyPEM, modeKey)
		action, why := ActionCreated, ""
		if s.keyPEM != nil {
			action, why = ActionRenewed, "new key"
		}
		r.record(NameServiceAccount, s.keyPath, KindKey, action, why, nil)
	} else {
		r.record(NameServiceAccount, s.keyPath, KindKey, ActionKept, "", nil)
	}
	r.files.add(s.pubPath, pubPEM, modeCert)
	action := ActionCreated
	switch {
	case s.pubPEM != nil && newKey:
		action, reason = ActionRenewed, "new key"
	case s.pubPEM != nil:
		action = ActionUpdated
	}
	r.record(NameServiceAccount, s.pubPath, KindPublicKey, action, reason, nil)
	return nil
}

// renewServiceAccount replaces the pair with a new key of alg (empty: the old key's algorithm when
// apictl generates it, else the default for service accounts).
func (r *run) renewServiceAccount(ctx context.Context, alg KeyAlgorithm) (string, error) {
	s, err := loadServiceAccount(r.dir)
	if err != nil {
		return "", err
	}
	if alg == "" {
		alg = DefaultKeyAlgorithm
		if s.key != nil {
			if old, err := ParseKeyAlgorithm(algorithmOf(s.key.Public())); err == nil {
				alg = old
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key, err := generateKey(serviceAccountAlgorithm(alg))
	if err != nil {
		return "", fmt.Errorf("creating the key of %s: %w", s.keyPath, err)
	}
	if err := r.writeServiceAccount(s, key, true, ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s and %s hold a new key pair: %s. A running apictl serve reads them only when it starts: restart it.",
		s.keyPath, s.pubPath, rotationNote(r.dir)), nil
}

// KeyStatus is the service-account key pair as `apictl certs list` shows it.
type KeyStatus struct {
	Name         string   `json:"name"`
	Path         string   `json:"path"`
	PublicPath   string   `json:"publicPath"`
	KeyAlgorithm string   `json:"keyAlgorithm,omitempty"`
	Status       Status   `json:"status"`
	Problems     []string `json:"problems,omitempty"`
}

// listServiceAccount judges the pair, or returns nil when the cert dir has neither file.
func listServiceAccount(dir string) *KeyStatus {
	s, err := loadServiceAccount(dir)
	if err != nil {
		return &KeyStatus{Name: NameServiceAccount, Path: ServiceAccountKeyPath(dir), PublicPath: ServiceAccountPubPath(dir),
			Status: StatusKeyMismatch, Problems: []string{err.Error()}}
	}
	if s.keyPEM == nil && s.pubPEM == nil {
		return nil
	}
	k := &KeyStatus{Name: NameServiceAccount, Path: s.keyPath, PublicPath: s.pubPath, Status: StatusOK}
	switch {
	case s.key != nil:
		k.KeyAlgorithm = algorithmOf(s.key.Public())
	case s.pub != nil:
		k.KeyAlgorithm = algorithmOf(s.pub)
	}
	var problems []string
	switch {
	case s.keyErr != nil:
		problems = append(problems, s.keyErr.Error())
	case s.pubErr != nil:
		problems = append(problems, s.pubErr.Error())
	case s.keyPEM == nil:
		problems = append(problems, s.keyPath+" is missing: tokens cannot be signed")
	case s.pubPEM == nil:
		problems = append(problems, s.pubPath+" is missing: apictl certs init writes it from "+s.keyPath)
	case !publicKeysEqual(s.key.Public(), s.pub):
		problems = append(problems, s.pubPath+" is not the public half of "+s.keyPath)
	}
	if len(problems) > 0 {
		k.Status, k.Problems = StatusKeyMismatch, problems
	}
	return k
}

// withoutServiceAccount takes "sa" (or sa.key, sa.pub) out of the names to renew, saying whether it
// was there: the service-account pair is a key pair, renewed by replacing it.
func withoutServiceAccount(names []string) ([]string, bool) {
	var rest []string
	found := false
	for _, n := range names {
		switch filepath.ToSlash(n) {
		case NameServiceAccount, NameServiceAccount + keyExt, NameServiceAccount + pubExt:
			found = true
		default:
			rest = append(rest, n)
		}
	}
	return rest, found
}

// writeKeys prints the key pairs below the certificate table, after a blank line; files are named
// as in the cert dir (the JSON and YAML listings give full paths).
func writeKeys(w io.Writer, keys []KeyStatus, terminal bool) error {
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	t := output.Table{Header: []string{"KEY PAIR", "PRIVATE KEY", "PUBLIC KEY", "KEY ALGORITHM", "STATUS"}}
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k.Name, filepath.Base(k.Path), filepath.Base(k.PublicPath), orDash(k.KeyAlgorithm), string(k.Status)})
	}
	return output.WriteTable(w, t, terminal)
}

// EnsureServiceAccount keeps or creates the service-account pair alone in dir (for servers that
// bring their own serving certificate), with the rules of EnsureServing.
func EnsureServiceAccount(ctx context.Context, dir string) (*Report, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	r := newRun(dir, time.Now())
	if err := r.ensureServiceAccount(ctx, DefaultKeyAlgorithm); err != nil {
		return nil, err
	}
	if err := r.files.commit(ctx, atomicWriter{}); err != nil {
		return nil, err
	}
	return &Report{Dir: dir, ServiceAccountKey: ServiceAccountKeyPath(dir), ServiceAccountPub: ServiceAccountPubPath(dir), Files: r.results}, nil
}
