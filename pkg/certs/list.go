package certs

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Status is the verdict on one certificate in the cert dir.
type Status string

// Statuses, from the most to the least urgent; a certificate with several problems gets the first.
const (
	StatusExpired     Status = "expired"
	StatusNotYetValid Status = "not yet valid"
	StatusBadChain    Status = "bad chain"
	StatusKeyMismatch Status = "key mismatch"
	StatusWrongUsage  Status = "wrong usage"
	StatusExpiring    Status = "expiring"
	StatusOK          Status = "ok"
)

// statusOrder ranks the statuses for picking a certificate's one status.
var statusOrder = []Status{StatusExpired, StatusNotYetValid, StatusBadChain, StatusKeyMismatch, StatusWrongUsage, StatusExpiring}

const (
	selfSigned    = "self-signed"
	kubeconfigExt = ".kubeconfig"
	certExt       = ".crt"
	keyExt        = ".key"
)

// Rows are listed CAs first, then leaves, then kubeconfigs, each group by name.
const (
	rowCA = iota
	rowLeaf
	rowConfig
)

// CertStatus is one row of `apictl certs list`.
type CertStatus struct {
	// Name is the certificate's file stem (apiserver, etcd/ca) or, for a certificate embedded in a
	// kubeconfig, the kubeconfig's file name.
	Name    string `json:"name"`
	Path    string `json:"path"`
	KeyPath string `json:"keyPath,omitempty"`
	Info
	// SignedBy names the CA in the cert dir that signed the certificate, "self-signed" for a root,
	// or the issuer's subject when no CA in the cert dir signed it.
	SignedBy string `json:"signedBy"`
	// ExternallyManaged is true for a CA whose key is not in the cert dir.
	ExternallyManaged bool `json:"externallyManaged"`
	// Residual is the time left, as kubeadm prints it (348d, 9y, -3d); ResidualSeconds the same in
	// seconds, negative once expired.
	Residual        string   `json:"residual"`
	ResidualSeconds int64    `json:"residualSeconds"`
	Status          Status   `json:"status"`
	Problems        []string `json:"problems,omitempty"`

	row int
}

// Unreadable is a file of the cert dir that could not be read as what its name says.
type Unreadable struct {
	Path    string `json:"path"`
	Problem string `json:"problem"`
}

// Listing is the result of List.
type Listing struct {
	Dir          string       `json:"certDir"`
	Now          time.Time    `json:"now"`
	WarnWithin   string       `json:"warnWithin"`
	Certificates []CertStatus `json:"certificates"`
	Unreadable   []Unreadable `json:"unreadable,omitempty"`

	// Keys are the key pairs without a certificate: the service-account pair.
	Keys []KeyStatus `json:"keys,omitempty"`
}

// OK reports whether every certificate is ok and every file readable: the exit status of `apictl
// certs list`.
func (l *Listing) OK() bool {
	for _, c := range l.Certificates {
		if c.Status != StatusOK {
			return false
		}
	}
	for _, k := range l.Keys {
		if k.Status != StatusOK {
			return false
		}
	}
	return len(l.Unreadable) == 0
}

// ListOptions say where to look and when a certificate counts as expiring.
type ListOptions struct {
	Dir        string
	Now        time.Time
	WarnWithin time.Duration
}

// List checks every certificate in the cert dir (*.crt, and the client certificates embedded in
// *.kubeconfig files): its validity at Now, whether a CA of the cert dir signed it, whether its key
// beside it matches, and whether its usages fit its name.
func List(opts ListOptions) (*Listing, error) {
	if opts.WarnWithin < 0 {
		return nil, flagErrorf("warn-within", FormatDuration(opts.WarnWithin), "can not be negative: use 0 or a period such as 30d")
	}
	info, err := os.Stat(opts.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, flagErrorf("cert-dir", opts.Dir, "does not exist: create the certificates with apictl certs init --cert-dir %s", opts.Dir)
	case err != nil:
		return nil, fmt.Errorf("reading --cert-dir %s: %w", opts.Dir, unwrapPath(err))
	case !info.IsDir():
		return nil, flagErrorf("cert-dir", opts.Dir, "is a file, not a directory: give a directory path")
	}
	l := &Listing{Dir: opts.Dir, Now: opts.Now.UTC(), WarnWithin: FormatDuration(opts.WarnWithin)}
	certFiles, configFiles, err := scanDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	type found struct {
		name, path string
		cert       *x509.Certificate
	}
	var certs []found
	cas := map[string]*x509.Certificate{}
	for _, path := range certFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			l.Unreadable = append(l.Unreadable, Unreadable{Path: path, Problem: unwrapPath(err).Error()})
			continue
		}
		parsed, err := parseCertsPEM(data)
		if err != nil {
			l.Unreadable = append(l.Unreadable, Unreadable{Path: path, Problem: err.Error()})
			continue
		}
		name := certName(opts.Dir, path)
		certs = append(certs, found{name: name, path: path, cert: parsed[0]})
		if parsed[0].IsCA {
			cas[name] = parsed[0]
		}
	}
	for _, f := range certs {
		keyPath := strings.TrimSuffix(f.path, certExt) + keyExt
		key, keyProblem := loadKeyFile(keyPath)
		c := judge(f.name, f.path, f.cert, cas, opts, key, keyProblem)
		if key != nil || keyProblem != "" {
			c.KeyPath = keyPath
		}
		l.Certificates = append(l.Certificates, c)
	}
	for _, path := range configFiles {
		rows, err := kubeconfigRows(opts, path, cas)
		if err != nil {
			l.Unreadable = append(l.Unreadable, Unreadable{Path: path, Problem: err.Error()})
			continue
		}
		l.Certificates = append(l.Certificates, rows...)
	}
	sort.SliceStable(l.Certificates, func(i, j int) bool {
		a, b := l.Certificates[i], l.Certificates[j]
		if a.row != b.row {
			return a.row < b.row
		}
		return a.Name < b.Name
	})
	if k := listServiceAccount(opts.Dir); k != nil {
		l.Keys = append(l.Keys, *k)
	}
	if len(l.Certificates) == 0 && len(l.Unreadable) == 0 {
		return nil, flagErrorf("cert-dir", opts.Dir, "holds no certificates: create them with apictl certs init --cert-dir %s", opts.Dir)
	}
	return l, nil
}

// scanDir finds the certificates and kubeconfigs below dir, skipping hidden files such as the
// temporary files of a write in progress.
func scanDir(dir string) (certFiles, configFiles []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, unwrapPath(err))
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		regular := d.Type().IsRegular()
		if d.Type()&fs.ModeSymlink != 0 { // a linked file counts; a linked directory is not followed
			info, err := os.Stat(path)
			regular = err == nil && info.Mode().IsRegular()
		}
		if regular {
			switch filepath.Ext(path) {
			case certExt:
				certFiles = append(certFiles, path)
			case kubeconfigExt:
				configFiles = append(configFiles, path)
			}
		}
		return nil
	})
	return certFiles, configFiles, err
}

// certName is the file stem relative to the cert dir, with forward slashes: etcd/ca.
func certName(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	return filepath.ToSlash(strings.TrimSuffix(rel, certExt))
}

// loadKeyFile reads the key beside a certificate: nil and no problem when there is none.
func loadKeyFile(path string) (crypto.Signer, string) {
	data, err := readOptional(path)
	switch {
	case err != nil:
		return nil, err.Error()
	case data == nil:
		return nil, ""
	}
	key, err := parseKeyPEM(data)
	if err != nil {
		return nil, path + " " + err.Error()
	}
	return key, ""
}

// judge finds every problem of one certificate and picks its status.
func judge(name, path string, cert *x509.Certificate, cas map[string]*x509.Certificate, opts ListOptions,
	key crypto.Signer, keyProblem string) CertStatus {
	c := CertStatus{Name: name, Path: path, Info: Describe(cert), row: rowLeaf}
	residual := cert.NotAfter.Sub(opts.Now)
	c.Residual, c.ResidualSeconds = FormatResidual(residual), int64(residual/time.Second)
	found := map[Status][]string{}
	add := func(s Status, problem string) { found[s] = append(found[s], problem) }

	switch {
	case opts.Now.After(cert.NotAfter):
		add(StatusExpired, "expired on "+FormatTime(cert.NotAfter))
	case opts.Now.Before(cert.NotBefore):
		add(StatusNotYetValid, "not valid until "+FormatTime(cert.NotBefore))
	case residual <= opts.WarnWithin:
		add(StatusExpiring, fmt.Sprintf("expires in %s, within --warn-within %s", FormatResidual(residual), FormatDuration(opts.WarnWithin)))
	}

	c.SignedBy = signedBy(cert, cas, opts.Now, add)

	switch {
	case keyProblem != "":
		add(StatusKeyMismatch, keyProblem)
	case key != nil && !keyMatches(cert, key):
		add(StatusKeyMismatch, "the key beside it belongs to another certificate")
	case key == nil && cert.IsCA:
		c.ExternallyManaged = true
	}

	if cert.IsCA || isKnownCA(name) {
		c.row = rowCA
		if problem := caProblem(cert); problem != "" {
			add(StatusWrongUsage, name+" "+problem)
		}
	} else if prof, ok := knownProfile(name); ok {
		if problem := usageProblem(cert, prof.usage); problem != "" {
			add(StatusWrongUsage, problem+", which "+name+" needs")
		}
	} else if usageOf(cert) == 0 {
		add(StatusWrongUsage, "allows neither server auth nor client auth")
	}

	c.Status = StatusOK
	for _, s := range statusOrder {
		if len(found[s]) > 0 {
			if c.Status == StatusOK {
				c.Status = s
			}
			c.Problems = append(c.Problems, found[s]...)
		}
	}
	return c
}

// signedBy names the CA of the cert dir that signed cert, reporting a bad chain when none did or
// when that CA is itself not valid.
func signedBy(cert *x509.Certificate, cas map[string]*x509.Certificate, now time.Time, add func(Status, string)) string {
	if cert.IsCA && checkSignedBy(cert, cert) == nil {
		return selfSigned
	}
	names := make([]string, 0, len(cas))
	for name := range cas {
		names = append(names, name)
	}
	sort.Strings(names)
	var sameName []string
	for _, name := range names {
		ca := cas[name]
		if ca == cert || !bytes.Equal(cert.RawIssuer, ca.RawSubject) {
			continue
		}
		if cert.CheckSignatureFrom(ca) != nil {
			sameName = append(sameName, name)
			continue
		}
		if problem := timeProblem(ca, now); problem != "" {
			add(StatusBadChain, "its CA "+name+" "+problem)
		}
		return name
	}
	if len(sameName) > 0 {
		add(StatusBadChain, "not signed by the key of "+strings.Join(sameName, ", ")+", although the issuer name matches (was the CA replaced?)")
		return sameName[0] + " (bad signature)"
	}
	add(StatusBadChain, fmt.Sprintf("no CA in the cert dir issued it (issuer %q)", cert.Issuer.String()))
	return cert.Issuer.String()
}
