package cacher

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"

	"github.com/apictl/apictl/pkg/storage"
)

// The cacher's continue tokens are base64url JSON like the etcd3 store's, marked with source so that
// the cacher tells its own from the store's and passes those on. Start is relative to the list's
// prefix, so a token cannot reach keys outside it; list is a hash of that prefix, so that a token
// given to another list is refused instead of paging through it.
type continueToken struct {
	Version  string `json:"v"`
	Revision int64  `json:"rv"`
	Start    string `json:"start"`
	List     string `json:"list"`
	Source   string `json:"source"`
}

const (
	tokenVersion = "meta.k8s.io/v1"
	tokenSource  = "watchcache"
	// latestRevision in a token means "at the cache's revision": the token of an Expired error goes
	// on from the same key but no longer at the list's revision.
	latestRevision = -1
)

var crcTable = crc64.MakeTable(crc64.ECMA)

func listHash(prefix string) string {
	return fmt.Sprintf("%x", crc64.Checksum([]byte(prefix), crcTable))
}

func encodeContinue(prefix, start string, rev int64) string {
	// A struct of strings and integers always marshals.
	data, _ := json.Marshal(continueToken{Version: tokenVersion, Revision: rev, Start: start,
		List: listHash(prefix), Source: tokenSource})
	return base64.RawURLEncoding.EncodeToString(data)
}

// decodeContinue reads a token the cacher issued; ours is false for any other token, which belongs
// to the store. A token of ours that does not fit the list is an InvalidContinue error.
func decodeContinue(token, prefix string) (t continueToken, ours bool, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return continueToken{}, false, nil
	}
	if json.Unmarshal(data, &t) != nil || t.Source != tokenSource {
		return continueToken{}, false, nil
	}
	bad := func(reason error) error {
		return &storage.StorageError{Code: storage.InvalidContinue, Op: "list", Key: prefix,
			Err: fmt.Errorf("continue token is not valid: %w; start the list again without it", reason)}
	}
	switch {
	case t.Version != tokenVersion:
		return t, true, bad(fmt.Errorf("unknown version %q", t.Version))
	case t.Revision == 0 || t.Revision < latestRevision:
		return t, true, bad(fmt.Errorf("revision %d", t.Revision))
	case t.Start == "":
		return t, true, bad(errors.New("no start key"))
	case t.List != listHash(prefix):
		return t, true, bad(errors.New("it was issued for a different list"))
	}
	return t, true, nil
}
