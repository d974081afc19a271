package certs

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// RenewSpec says which certificates Renew re-signs and how. Start from NewRenewSpec.
type RenewSpec struct {
	Dir string
	// Names are certificates by file stem (apiserver, admin, etcd/server, a client's name). CAs
	// (ca, etcd/ca) are renewed only with ConfirmCA.
	Names []string
	// All renews every leaf in the cert dir whose CA's key is there too.
	All       bool
	ConfirmCA bool
	// Hosts, EtcdHosts, AdvertiseAddress and Hostname add SANs as for EnsureServing; a renewed
	// certificate keeps every SAN it had.
	Hosts            []string
	EtcdHosts        []string
	AdvertiseAddress string
	Hostname         string
	// Validity is the new lifetime of renewed leaves; CAValidity, of renewed CAs.
	Validity   time.Duration
	CAValidity time.Duration
	// NewKey rotates the keys of renewed leaves; KeyAlgorithm picks the new keys' algorithm (empty:
	// the old key's, when apictl can generate it, else DefaultKeyAlgorithm).
	NewKey       bool
	KeyAlgorithm KeyAlgorithm
}

// NewRenewSpec returns the defaults for a cert dir.
func NewRenewSpec(dir string) RenewSpec {
	return RenewSpec{Dir: dir, Validity: DefaultValidity, CAValidity: DefaultCAValidity}
}

// Renew signs new certificates for existing ones with their CA: same subject, the old SANs plus any
// requested ones, a new validity period, the same key unless NewKey. A CA is renewed with its own
// key and subject, so that what it signed stays valid. Kubeconfigs in the cert dir that embed a
// renewed certificate or CA are rewritten. The report's notes say what other programs must do.
func Renew(ctx context.Context, spec RenewSpec) (*Report, error) {
	return renew(ctx, spec, atomicWriter{})
}

// renewed remembers what a renewal replaced, for the kubeconfigs and the notes.
type renewed struct {
	name        string
	path        string
	old         *x509.Certificate
	kp          *KeyPair
	newKey      bool
	isCA        bool
	kubeconfigs []string
}

func renew(ctx context.Context, spec RenewSpec, w fileWriter) (*Report, error) {
	if spec.All == (len(spec.Names) > 0) {
		return nil, errors.New("name the certificates to renew, or give --all for every leaf certificate")
	}
	var rotateSA bool
	spec.Names, rotateSA = withoutServiceAccount(spec.Names)
	serving := NewServingSpec(spec.Dir)
	serving.Hosts, serving.EtcdHosts, serving.AdvertiseAddress, serving.Hostname = spec.Hosts, spec.EtcdHosts, spec.AdvertiseAddress, spec.Hostname
	serving.Validity, serving.CAValidity, serving.KeyAlgorithm = spec.Validity, spec.CAValidity, spec.KeyAlgorithm
	serving.Etcd = true // renewing etcd certificates needs no --etcd
	p, err := serving.plan()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(spec.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil, flagErrorf("cert-dir", spec.Dir, "does not exist: create the certificates with apictl certs init --cert-dir %s", spec.Dir)
	}
	r := newRun(spec.Dir, time.Now())
	pairs, order, err := r.loadAll()
	if err != nil {
		return nil, err
	}
	targets, skipped, err := renewTargets(spec, pairs, order)
	if err != nil {
		return nil, err
	}
	report := &Report{Dir: spec.Dir}
	report.Notes = append(report.Notes, skipped...)
	cas := map[string]*caState{}
	var done []*renewed
	var errs []error
	for _, name := range targets {
		if s := pairs[name]; s.cert.IsCA {
			rn, ca, err := r.renewCAPair(s, pairs, p.CAValidity, spec.NewKey)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cas[name] = ca
			done = append(done, rn)
		}
	}
	for _, name := range targets {
		if s := pairs[name]; !s.cert.IsCA {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rn, err := r.renewLeaf(ctx, s, pairs, cas, p, spec)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			done = append(done, rn)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	report.Notes = append(report.Notes, r.refreshKubeconfigs(done)...)
	var saNote string
	if rotateSA {
		if saNote, err = r.renewServiceAccount(ctx, spec.KeyAlgorithm); err != nil {
			return nil, err
		}
	}
	if err := r.files.commit(ctx, w); err != nil {
		return nil, err
	}
	report.Files = r.results
	if rotateSA {
		report.Notes = append(report.Notes, saNote)
	}
	if len(done) > 0 {
		report.Notes = append(report.Notes, renewNotes(spec.Dir, done, r.now)...)
	}
	return report, nil
}

// loadAll reads every certificate of the cert dir with its key, by name.
func (r *run) loadAll() (map[string]*stored, []string, error) {
	certFiles, _, err := scanDir(r.dir)
	if err != nil {
		return nil, nil, err
	}
	pairs := map[string]*stored{}
	var order []string
	for _, path := range certFiles {
		name := certName(r.dir, path)
		s, err := loadStored(r.dir, name)
		if err != nil {
			return nil, nil, err
		}
		pairs[name] = s
		order = append(order, name)
	}
	sort.Strings(order)
	return pairs, order, nil
}

// renewTargets resolves the names to renew. Unknown names, unreadable certificates and CAs without
// confirmation are errors; with --all, leaves whose CA key is absent are skipped with a note.
func renewTargets(spec RenewSpec, pairs map[string]*stored, order []string) ([]string, []string, error) {
	var targets, skipped []string
	var errs []error
	if spec.All {
		for _, name := range order {
			s := pairs[name]
			switch {
			case s.certErr != nil:
				errs = append(errs, fmt.Errorf("%w: fix or remove it before renewing everything", s.certErr))
			case !s.cert.IsCA:
				if ca := signerOf(s.cert, pairs); ca == nil || ca.keyPEM == nil {
					skipped = append(skipped, fmt.Sprintf("%s was skipped: no CA with its key in %s signed it; renew it where it was issued", s.certPath, spec.Dir))
					continue
				}
				targets = append(targets, name)
			}
		}
		if len(targets) == 0 && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("%s holds no leaf certificate apictl can renew: create them with apictl certs init --cert-dir %s", spec.Dir, spec.Dir))
		}
		return targets, skipped, errors.Join(errs...)
	}
	for _, raw := range spec.Names {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.ToSlash(raw), certExt), keyExt)
		s, ok := pairs[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("no certificate %q in %s: renew one of %s", raw, spec.Dir, strings.Join(order, ", ")))
			continue
		case s.certErr != nil:
			errs = append(errs, fmt.Errorf("%w: run apictl certs init --force to re-issue it, or remove it", s.certErr))
			continue
		case s.cert.IsCA && !spec.ConfirmCA:
			errs = append(errs, fmt.Errorf("%s is a CA: renewing it needs --yes (apictl certs renew %s --yes); it keeps its key and subject, so the certificates it signed stay valid", s.certPath, name))
			continue
		}
		if !slices.Contains(targets, name) {
			targets = append(targets, name)
		}
	}
	return targets, nil, errors.Join(errs...)
}

// signerOf returns the CA of the cert dir that signed cert, or nil.
func signerOf(cert *x509.Certificate, pairs map[string]*stored) *stored {
	names := make([]string, 0, len(pairs))
	for name := range pairs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := pairs[name]
		if s.cert != nil && s.cert.IsCA && s.cert != cert && checkSignedBy(cert, s.cert) == nil {
			return s
		}
	}
	return nil
}

// renewCAPair signs a new certificate for the CA s with its own key, and checks that everything it
// signed in the cert dir still verifies against the new certificate before planning to write it.
func (r *run) renewCAPair(s *stored, pairs map[string]*stored, validity time.Duration, rotate bool) (*renewed, *caState, error) {
	switch {
	case rotate:
		return nil, nil, fmt.Errorf("%s: --new-key cannot be used for a CA, since a new CA key invalidates every certificate it signed; to start over run apictl certs init --force-ca", s.certPath)
	case s.keyPEM == nil:
		return nil, nil, fmt.Errorf("%s cannot be renewed here: %s is not in the cert dir (external CA)", s.certPath, s.keyPath)
	case s.keyErr != nil:
		return nil, nil, s.keyErr
	case !keyMatches(s.cert, s.key):
		return nil, nil, fmt.Errorf("%s does not match %s (key mismatch): restore the right key, or %s", s.keyPath, s.certPath, replaceCA)
	}
	cert, err := renewCA(&KeyPair{Cert: s.cert, Key: s.key}, validity)
	if err != nil {
		return nil, nil, err
	}
	for _, other := range pairs {
		if other.cert != nil && other.cert != s.cert && checkSignedBy(other.cert, s.cert) == nil {
			if err := checkSignedBy(other.cert, cert); err != nil {
				return nil, nil, fmt.Errorf("renewing %s would break %s (%v): nothing was written", s.certPath, other.certPath, err)
			}
		}
	}
	kp := &KeyPair{Cert: cert, Key: s.key}
	if err := r.writePair(s, kp, ActionRenewed, "same key and subject"); err != nil {
		return nil, nil, err
	}
	return &renewed{name: s.name, path: s.certPath, old: s.cert, kp: kp, isCA: true}, &caState{name: s.name, kp: kp}, nil
}

// renewLeaf re-signs the leaf s with the CA that signed it.
func (r *run) renewLeaf(ctx context.Context, s *stored, pairs map[string]*stored, renewedCAs map[string]*caState,
	p *servingPlan, spec RenewSpec) (*renewed, error) {
	caStored := signerOf(s.cert, pairs)
	if caStored == nil {
		fix := "renew it where it was issued"
		if _, ok := knownProfile(s.name); ok {
			fix = "apictl certs init re-issues it with the cert dir's CA"
		}
		return nil, fmt.Errorf("%s was not signed by a CA in %s: %s", s.certPath, r.dir, fix)
	}
	ca := renewedCAs[caStored.name]
	if ca == nil {
		var err error
		if ca, _, _, err = r.loadCA(caStored.name); err != nil {
			return nil, fmt.Errorf("renewing %s: %w", s.certPath, err)
		}
	}
	if ca.external {
		return nil, fmt.Errorf("%s cannot be renewed here: its CA %s has no key in %s (external CA); have that CA sign a new certificate",
			s.certPath, caStored.certPath, r.dir)
	}
	key := reuseKey
	alg := p.keyAlgorithm
	if spec.KeyAlgorithm == "" && s.key != nil {
		if old, err := ParseKeyAlgorithm(algorithmOf(s.key.Public())); err == nil {
			alg = old
		}
	}
	switch {
	case spec.NewKey:
		key = newKey
	case s.keyErr != nil:
		return nil, fmt.Errorf("%w: renew with --new-key to replace it", s.keyErr)
	case s.key == nil:
		return nil, fmt.Errorf("%s is missing: renew with --new-key to create one", s.keyPath)
	case !keyMatches(s.cert, s.key):
		return nil, fmt.Errorf("%s does not match %s (key mismatch): renew with --new-key to replace it", s.keyPath, s.certPath)
	}
	want := usageOf(s.cert)
	old := append(certHosts(s.cert), s.cert.EmailAddresses...)
	for _, u := range s.cert.URIs {
		old = append(old, u.String())
	}
	hosts := old
	if prof, ok := knownProfile(s.name); ok {
		want = prof.usage
		switch prof.hosts {
		case hostsAPIServer:
			hosts = unionHosts(old, p.apiHosts)
		case hostsEtcd:
			hosts = unionHosts(old, p.etcdHosts)
		}
	}
	req := leafRequest{commonName: s.cert.Subject.CommonName, organizations: s.cert.Subject.Organization, hosts: hosts, usage: want}
	reason := ""
	if added := hosts[len(old):]; len(added) > 0 {
		reason = "SANs added: " + strings.Join(added, ", ")
	}
	kp, err := r.issueLeaf(ctx, s, req, ca, key, leafOptions{validity: p.Validity, alg: alg}, ActionRenewed, reason)
	if err != nil {
		return nil, err
	}
	return &renewed{name: s.name, path: s.certPath, old: s.cert, kp: kp, newKey: spec.NewKey}, nil
}
