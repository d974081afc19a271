package status

import "time"

// LocalOptions say what a data dir holds, for a report made without the server.
type LocalOptions struct {
	// CertDir is the server's cert dir.
	CertDir string
	// Snapshots are the scheduled snapshots' dir and schedule (serve's defaults unless told).
	Snapshots SnapshotSource
	// ServerURL and ServerError say which server was asked and why it did not answer.
	ServerURL, ServerError string
}

// Local reports what can be read without the server, the certificates and the snapshots, with the
// server as a problem, and judges it as of now.
func Local(o LocalOptions, now time.Time) *Report {
	r := &Report{APIVersion: APIVersion, Time: now.UTC(), Server: Server{URL: o.ServerURL, Error: o.ServerError}}
	if o.Snapshots.Dir != "" {
		r.Snapshots = SnapshotFacts(o.Snapshots, now)
	}
	if o.CertDir != "" {
		r.Certificates, r.CertificatesError = certificates(o.CertDir, now)
	}
	Judge(r, now)
	return r
}
