package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
)

// continueVersion marks the token format; kube's tokens carry the same.
const continueVersion = "meta.k8s.io/v1"

// ContinueLatest, as a token's Revision, means "the latest revision": the token given with an Expired
// error goes on from the same key but can no longer read at the list's original revision.
const ContinueLatest int64 = -1

// ContinueToken is the position in a list that a continue token carries. The etcd3 store and the
// watch cache share one format, so that either can answer the other's tokens for the same list.
type ContinueToken struct {
	// Revision is the revision every page of the list reads at, or ContinueLatest.
	Revision int64
	// Start is the first key of the next page, relative to the list's prefix, so that a token cannot
	// reach keys outside it.
	Start string
	// Source names who issued the token when that matters to the reader: the watch cache marks its
	// own tokens so as to answer them itself. Empty for the store's tokens.
	Source string
}

// continueJSON is a token's content (base64url, unpadded, like kube's). Prefix is a hash of the list's
// prefix, so that a token is refused by a list of another prefix instead of quietly paging through it.
type continueJSON struct {
	Version  string `json:"v"`
	Revision int64  `json:"rv"`
	Start    string `json:"start"`
	Prefix   string `json:"p"`
	Source   string `json:"source,omitempty"`
}

// EncodeContinue returns the continue token for position t in the list of prefix.
func EncodeContinue(prefix string, t ContinueToken) string {
	// A struct of strings and integers always marshals.
	data, _ := json.Marshal(continueJSON{Version: continueVersion, Revision: t.Revision, Start: t.Start,
		Prefix: prefixHash(prefix), Source: t.Source})
	return base64.RawURLEncoding.EncodeToString(data)
}

// DecodeContinue reads a continue token given to the list of prefix. A token that does not decode or
// does not fit the list is an InvalidContinue error; when it decodes, the token is returned with the
// error too, so that a caller can still tell from Source who issued it.
func DecodeContinue(token, prefix string) (ContinueToken, error) {
	bad := func(reason error) error {
		return &StorageError{Code: InvalidContinue, Op: "list", Key: prefix,
			Err: fmt.Errorf("continue token is not valid: %w; start the list again without it", reason)}
	}
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return ContinueToken{}, bad(errors.New("it is not base64"))
	}
	var c continueJSON
	if err := json.Unmarshal(data, &c); err != nil {
		return ContinueToken{}, bad(errors.New("it does not hold a list position"))
	}
	t := ContinueToken{Revision: c.Revision, Start: c.Start, Source: c.Source}
	switch {
	case c.Version != continueVersion:
		return t, bad(fmt.Errorf("unknown version %q", c.Version))
	case c.Revision == 0 || c.Revision < ContinueLatest:
		return t, bad(fmt.Errorf("revision %d", c.Revision))
	case c.Start == "":
		return t, bad(errors.New("no start key"))
	case c.Prefix != prefixHash(prefix):
		return t, bad(errors.New("it was issued for a different list"))
	}
	return t, nil
}

func prefixHash(prefix string) string {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}
