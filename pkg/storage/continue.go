package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"strconv"
	"strings"
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

// continueToken is a token's content (base64url, unpadded, like kube's). Prefix is a hash of the list's
// prefix, so that a token is refused by a list of another prefix instead of quietly paging through it.
// The type's name is kube's: encoding/json names it in the errors a malformed token gets ("cannot
// unmarshal array into Go value of type storage.continueToken"), which reach the client.
type continueToken struct {
	Version  string `json:"v"`
	Revision int64  `json:"rv"`
	Start    string `json:"start"`
	Prefix   string `json:"p"`
	Source   string `json:"source,omitempty"`
}

// EncodeContinue returns the continue token for position t in the list of prefix.
func EncodeContinue(prefix string, t ContinueToken) string {
	// A struct of strings and integers always marshals.
	data, _ := json.Marshal(continueToken{Version: continueVersion, Revision: t.Revision, Start: t.Start,
		Prefix: prefixHash(prefix), Source: t.Source})
	return base64.RawURLEncoding.EncodeToString(data)
}

// DecodeContinue reads a continue token given to the list of prefix. A token that does not decode or
// does not fit the list is an InvalidContinue error in kube's words ("invalid continue token: continue
// key is not valid: ..."); when it decodes, the token is returned with the error too, so that a caller
// can still tell from Source who issued it. A negative revision means the latest, as in kube.
func DecodeContinue(token, prefix string) (ContinueToken, error) {
	bad := func(reason error) error {
		return &StorageError{Code: InvalidContinue, Op: "list", Key: prefix,
			Err: fmt.Errorf("invalid continue token: %w", reason)}
	}
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return ContinueToken{}, bad(fmt.Errorf("%w: %v", errInvalidContinueKey, err))
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return ContinueToken{}, bad(fmt.Errorf("%w: %v", errInvalidContinueKey, err))
	}
	t := ContinueToken{Revision: max(c.Revision, ContinueLatest), Start: c.Start, Source: c.Source}
	switch {
	case c.Version != continueVersion:
		return t, bad(fmt.Errorf("%w: server does not recognize this encoded version %v", errInvalidContinueKey, c.Version))
	case c.Revision == 0:
		return t, bad(fmt.Errorf("%w: incorrect encoded start resourceVersion (version meta.k8s.io/v1)", errInvalidContinueKey))
	case c.Start == "":
		return t, bad(fmt.Errorf("%w: encoded start key empty (version meta.k8s.io/v1)", errInvalidContinueKey))
	case !cleanStart(c.Start):
		// kube's defence against a start key that climbs out of the list's prefix.
		return t, bad(fmt.Errorf("%w: %v", errInvalidContinueKey, c.Start))
	case c.Prefix != prefixHash(prefix):
		return t, bad(fmt.Errorf("%w: it was issued for a different list", errInvalidContinueKey))
	}
	return t, nil
}

// errInvalidContinueKey starts kube's messages about a continue token that does not decode.
var errInvalidContinueKey = errors.New("continue key is not valid")

// ErrContinueWithResourceVersion is kube's answer to a list that gives both a continue token and a
// resourceVersion other than "0": the token carries the list's revision. Lists check it once the
// token decoded, as kube does.
var ErrContinueWithResourceVersion = errors.New("specifying resource version is not allowed when using continue")

// cleanStart reports whether start, taken as a path below the list's prefix, stays there: kube cleans
// it as a path and refuses it when that changes it ("../x", "a//b").
func cleanStart(start string) bool {
	key := start
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	return path.Clean(key) == key
}

func prefixHash(prefix string) string {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}
