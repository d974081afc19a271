// Package join lets an apictl server become a member of another's embedded etcd cluster: the join
// token that authorizes it, the endpoint a member serves on its secure port, and the client the
// joining server calls it with. The token also pins the member's serving CA, so that a joiner, which
// has no CA to trust yet, knows it talks to the cluster and not to whoever answers at the URL.
package join

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tokenPrefix versions the token's format.
const tokenPrefix = "apictl1"

// Token is a join token: "apictl1.<CA hash>.<secret>". The CA hash is the SHA-256 of the DER of the
// CA that signed the member's serving certificate; the secret is what the member checks.
type Token struct {
	CAHash string
	Secret string
}

// NewToken returns a token with a new random secret, pinning caPEM.
func NewToken(caPEM []byte) (Token, error) {
	hash, err := CAHash(caPEM)
	if err != nil {
		return Token{}, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Token{}, fmt.Errorf("making a join token: %w", err)
	}
	return Token{CAHash: hash, Secret: base64.RawURLEncoding.EncodeToString(b)}, nil
}

// String is the token as users pass it to --join-token.
func (t Token) String() string { return tokenPrefix + "." + t.CAHash + "." + t.Secret }

// ParseToken reads a token as String writes it.
func ParseToken(s string) (Token, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 || parts[0] != tokenPrefix {
		return Token{}, errors.New("not an apictl join token: want apictl1.<CA hash>.<secret>, as in the join-token file of the first server's --data-dir")
	}
	if b, err := hex.DecodeString(parts[1]); err != nil || len(b) != sha256.Size {
		return Token{}, errors.New("the join token's CA hash is not 64 hex digits: copy the whole token from the join-token file")
	}
	if len(parts[2]) < 16 {
		return Token{}, errors.New("the join token's secret is too short: copy the whole token from the join-token file")
	}
	// CAHash writes lower case; a hash copied through something that upper-cased it still pins.
	return Token{CAHash: strings.ToLower(parts[1]), Secret: parts[2]}, nil
}

// MatchesSecret reports whether secret is t's, in constant time.
func (t Token) MatchesSecret(secret string) bool {
	return t.Secret != "" && subtle.ConstantTimeCompare([]byte(t.Secret), []byte(secret)) == 1
}

// CAHash is the hex SHA-256 of the DER of the first certificate in caPEM.
func CAHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", errors.New("no PEM certificate in the CA bundle")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return "", fmt.Errorf("parsing the CA certificate: %w", err)
	}
	sum := sha256.Sum256(block.Bytes)
	return hex.EncodeToString(sum[:]), nil
}

// TokenFile is the join token's file in a data directory.
func TokenFile(dataDir string) string { return filepath.Join(dataDir, "join-token") }

// ReadToken reads the token in path; ok is false when there is none.
func ReadToken(path string) (t Token, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, fmt.Errorf("reading the join token: %w", err)
	}
	t, err = ParseToken(string(b))
	if err != nil {
		return Token{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return t, true, nil
}

// WriteToken writes t to path, readable by its owner only, through a temporary file and a rename.
func WriteToken(path string, t Token) error {
	return writeFile(path, []byte(t.String()+"\n"))
}

// writeFile replaces path with data, mode 0600, atomically.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
