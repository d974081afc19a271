package certs

import (
	"time"
)

// Action is what a run did to one file.
type Action string

// Actions, as the summary table prints them.
const (
	// ActionCreated: the file did not exist.
	ActionCreated Action = "created"
	// ActionKept: the file exists, is valid and fits the request; it was not touched.
	ActionKept Action = "kept"
	// ActionReissued: the certificate was replaced by `init` because it no longer fit (Reason says why).
	ActionReissued Action = "re-issued"
	// ActionRenewed: `renew` signed a new certificate with the same subject and SANs (plus new ones).
	ActionRenewed Action = "renewed"
	// ActionUpdated: a kubeconfig was rewritten because what it embeds or points at changed.
	ActionUpdated Action = "updated"
)

// Kinds of file.
const (
	KindCertificate = "certificate"
	KindKey         = "key"
	KindKubeconfig  = "kubeconfig"
	// KindPublicKey is a bare public key (sa.pub).
	KindPublicKey = "public key"
)

// FileResult is one file of a run's summary.
type FileResult struct {
	// Name is the certificate's name (apiserver, etcd/ca) or the kubeconfig's file name.
	Name string `json:"name"`
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Action says what happened; Reason, for anything but created and kept, says why.
	Action Action `json:"action"`
	Reason string `json:"reason,omitempty"`
	// NotAfter is when the certificate (or the one a kubeconfig embeds) expires; nil for keys.
	NotAfter *time.Time `json:"notAfter,omitempty"`
}

// Report is what a run of EnsureServing, Renew or IssueClient found and did.
type Report struct {
	// Dir is the cert dir.
	Dir string `json:"certDir"`
	// The paths `apictl serve` needs; empty when a run did not deal with them.
	CACert          string `json:"caCert,omitempty"`
	CAKey           string `json:"caKey,omitempty"`
	ServingCert     string `json:"servingCert,omitempty"`
	ServingKey      string `json:"servingKey,omitempty"`
	AdminKubeconfig string `json:"adminKubeconfig,omitempty"`
	// FrontProxyCACert verifies the front proxy for request-header authentication; the proxy presents
	// FrontProxyClientCert and FrontProxyClientKey.
	FrontProxyCACert     string `json:"frontProxyCACert,omitempty"`
	FrontProxyClientCert string `json:"frontProxyClientCert,omitempty"`
	FrontProxyClientKey  string `json:"frontProxyClientKey,omitempty"`
	// ServiceAccountKey signs service-account tokens; ServiceAccountPub verifies them.
	ServiceAccountKey string `json:"serviceAccountKey,omitempty"`
	ServiceAccountPub string `json:"serviceAccountPub,omitempty"`
	// ExternalCA is true when ca.crt has no ca.key beside it: leaves were checked, not signed.
	ExternalCA bool `json:"externalCA,omitempty"`
	// Files lists every file the run considered, in the order it writes them.
	Files []FileResult `json:"files"`
	// Notes say what the user or other programs must do next, if anything.
	Notes []string `json:"notes,omitempty"`
}

// Changed reports whether the run wrote any file.
func (r *Report) Changed() bool {
	for _, f := range r.Files {
		if f.Action != ActionKept {
			return true
		}
	}
	return false
}

// File returns the result for a path, or nil.
func (r *Report) File(path string) *FileResult {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}
