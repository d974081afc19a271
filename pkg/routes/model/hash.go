package model

import (
	"crypto/sha256"
	"encoding/base64"
)

// StorageVersionHash is the hash discovery publishes for the version a resource is stored in:
// base64 of the first 8 bytes of sha256("group/version/Kind"), as kube computes it. Clients compare
// hashes to notice storage migrations; they never decode them.
func StorageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}
