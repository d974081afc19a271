// Package encryption reads kube's EncryptionConfiguration (--encryption-provider-config) and turns it
// into the transformers that encrypt each resource's values at rest, with kube's own transformer
// packages (k8s.io/apiserver/pkg/storage/value/...) so that data written by apictl reads back in
// kube-apiserver and the other way round: a value is stored as k8s:enc:<provider>:v1:<key name>:<data>.
//
// The first provider of a resource's list writes; all of them read, and a value read with any but the
// first is stale, so an update rewrites it with the first (key rotation). A resource no list names is
// stored as it is, and reading an encrypted value for it fails as in kube ("identity transformer tried
// to read encrypted data").
//
// kube's own loader (k8s.io/apiserver/pkg/server/options/encryptionconfig) is not used: it brings in
// KMS, CEL and global state. The loader here gives kube's validation messages and on-disk format for
// the providers apictl supports: aescbc, aesgcm, secretbox and identity. KMS is refused.
package encryption
