package etcd3

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/apictl/apictl/pkg/storage"
)

// continueVersion marks the token format; kube's tokens carry the same.
const continueVersion = "meta.k8s.io/v1"

// inconsistentRevision in a token means "the latest revision": the token given with an Expired error
// goes on from the same key but can no longer read at the list's original revision.
const inconsistentRevision = -1

// continueToken is the JSON inside a continue token (base64url, unpadded, like kube's). Start is
// relative to the list's prefix, so a token cannot reach keys outside it; Prefix is a hash of that
// prefix, so a token is refused by a list of another prefix instead of quietly paging through it.
type continueToken struct {
	Version  string `json:"v"`
	Revision int64  `json:"rv"`
	Start    string `json:"start"`
	Prefix   string `json:"p"`
}

func encodeContinue(prefix, start string, revision int64) (string, error) {
	data, err := json.Marshal(continueToken{Version: continueVersion, Revision: revision, Start: start, Prefix: prefixHash(prefix)})
	if err != nil {
		return "", fmt.Errorf("encode continue token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeContinue returns the first key to read and the revision to read at (inconsistentRevision for
// the latest).
func decodeContinue(token, prefix string) (start string, revision int64, err error) {
	bad := func(reason error) error {
		return &storage.StorageError{Code: storage.InvalidContinue, Op: "list", Key: prefix,
			Err: fmt.Errorf("continue token is not valid: %w; start the list again without it", reason)}
	}
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, bad(errors.New("it is not base64"))
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, bad(errors.New("it does not hold a list position"))
	}
	switch {
	case c.Version != continueVersion:
		return "", 0, bad(fmt.Errorf("unknown version %q", c.Version))
	case c.Revision == 0 || c.Revision < inconsistentRevision:
		return "", 0, bad(fmt.Errorf("revision %d", c.Revision))
	case c.Start == "":
		return "", 0, bad(errors.New("no start key"))
	case c.Prefix != prefixHash(prefix):
		return "", 0, bad(errors.New("it was issued for a different list"))
	}
	return prefix + c.Start, c.Revision, nil
}

func prefixHash(prefix string) string {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}
