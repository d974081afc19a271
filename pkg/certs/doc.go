// Package certs is apictl's PKI: it creates, loads, checks, renews and inspects the certificates
// `apictl serve` needs (a CA, a serving pair, client pairs and their kubeconfigs, and optionally an
// etcd CA with its server, peer and client pairs).
//
// Certificates are signed through cfssl; no cfssl type leaves this package, which speaks in
// KeyPair, Info and Report values instead. Keys are generated and written here, as PKCS#8
// "PRIVATE KEY" PEM for every algorithm, which openssl, Go and kubectl all read.
//
// Every function that writes plans all its files in memory first and then writes each one
// atomically (temporary file in the same directory, fsync, rename, fsync of the directory), keys
// before certificates and kubeconfigs last; when a write fails, the files the run already wrote are
// put back as they were. A reader therefore never sees a half-written file, and a failed run leaves
// the directory as it found it.
package certs

import "time"

// Defaults shared by the commands and by `apictl serve`.
const (
	// DefaultValidity is how long a leaf certificate is valid: one year, as kubeadm.
	DefaultValidity = 365 * 24 * time.Hour
	// DefaultCAValidity is how long a CA certificate is valid: ten years, as kubeadm.
	DefaultCAValidity = 10 * 365 * 24 * time.Hour
	// DefaultWarnWithin is how close to its expiry a certificate is reported as expiring.
	DefaultWarnWithin = 30 * 24 * time.Hour
	// DefaultSecurePort is the port written into kubeconfigs when none is given, serve's default.
	DefaultSecurePort = 6443
	// DirName is the cert dir's name inside the data dir.
	DirName = "pki"
)

// backdate moves a new certificate's NotBefore into the past, so that a peer whose clock is a little
// behind does not reject it as not yet valid.
const backdate = 5 * time.Minute
