package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// run collects the files one call means to write and the summary of what it found. EnsureServing,
// Renew and IssueClient each plan through one run and commit it at the end.
type run struct {
	dir     string
	now     time.Time
	files   fileSet
	results []FileResult
}

func newRun(dir string, now time.Time) *run { return &run{dir: dir, now: now} }

func (r *run) record(name, path, kind string, action Action, reason string, notAfter *time.Time) {
	r.results = append(r.results, FileResult{Name: name, Path: path, Kind: kind, Action: action, Reason: reason, NotAfter: notAfter})
}

// validity returns the period of a certificate issued now: backdated a little for clock skew, and
// lasting validity from now.
func (r *run) validity(validity time.Duration) (time.Time, time.Time) {
	return r.now.Add(-backdate).Truncate(time.Second).UTC(), r.now.Add(validity).Truncate(time.Second).UTC()
}

// caState is a CA as a run found or made it.
type caState struct {
	name string
	kp   *KeyPair
	// external: its key is not in the cert dir, so it can check but not sign.
	external bool
}

// replaceCA is the advice for a CA that cannot be used as it is.
const replaceCA = "run apictl certs init --force-ca to create a new CA (which re-issues every certificate it signed)"

// loadCA reads and checks the CA called name. missing is true, with no error, when neither of its
// files exists.
func (r *run) loadCA(name string) (ca *caState, s *stored, missing bool, err error) {
	if s, err = loadStored(r.dir, name); err != nil {
		return nil, nil, false, err
	}
	switch {
	case s.certPEM == nil && s.keyPEM == nil:
		return nil, s, true, nil
	case s.certErr != nil:
		return nil, s, false, fmt.Errorf("%w: restore it, or %s", s.certErr, replaceCA)
	case s.certPEM == nil:
		return nil, s, false, fmt.Errorf("%s exists without %s: restore the certificate, or %s", s.keyPath, s.certPath, replaceCA)
	}
	if problem := caProblem(s.cert); problem != "" {
		return nil, s, false, fmt.Errorf("%s %s: %s", s.certPath, problem, replaceCA)
	}
	if problem := timeProblem(s.cert, r.now); problem != "" {
		return nil, s, false, fmt.Errorf("CA %s %s: renew it with apictl certs renew %s --yes, or %s", s.certPath, problem, name, replaceCA)
	}
	if s.keyPEM == nil {
		return &caState{name: name, kp: &KeyPair{Cert: s.cert}, external: true}, s, false, nil
	}
	switch {
	case s.keyErr != nil:
		return nil, s, false, fmt.Errorf("%w: restore it, or %s", s.keyErr, replaceCA)
	case !keyMatches(s.cert, s.key):
		return nil, s, false, fmt.Errorf("%s does not match %s (key mismatch): restore the right key, or %s", s.keyPath, s.certPath, replaceCA)
	}
	return &caState{name: name, kp: &KeyPair{Cert: s.cert, Key: s.key}}, s, false, nil
}

// ensureCA loads the CA called name, or creates it when it is missing or force is set.
func (r *run) ensureCA(ctx context.Context, name string, alg KeyAlgorithm, validity time.Duration, force bool) (*caState, error) {
	ca, s, missing, err := r.loadCA(name)
	if !missing && !force {
		if err != nil {
			return nil, err
		}
		notAfter := ca.kp.Cert.NotAfter
		if ca.external {
			r.record(name, s.certPath, KindCertificate, ActionKept, "external CA: no "+s.keyPath+"; certificates are checked, not signed", &notAfter)
		} else {
			r.record(name, s.keyPath, KindKey, ActionKept, "", nil)
			r.record(name, s.certPath, KindCertificate, ActionKept, "", &notAfter)
		}
		return ca, nil
	}
	if s == nil { // unreadable files: loadCA said why
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key, err := generateKey(alg)
	if err != nil {
		return nil, fmt.Errorf("creating the key of %s: %w", s.keyPath, err)
	}
	cert, err := newCA(caRequest{commonName: caCommonNames[name], validity: validity, key: key})
	if err != nil {
		return nil, err
	}
	kp := &KeyPair{Cert: cert, Key: key}
	if err := r.writePair(s, kp, ActionReissued, "--force-ca: new CA with a new key"); err != nil {
		return nil, err
	}
	return &caState{name: name, kp: kp}, nil
}

// leafOptions say how to issue leaves and how to tell the user to repair a broken one.
type leafOptions struct {
	validity time.Duration
	alg      KeyAlgorithm
	// force re-issues with a new key and exactly the requested SANs.
	force bool
	// repair is the advice for a damaged or mismatched pair, such as "run apictl certs init --force
	// to re-issue it, or remove it".
	repair string
}

// ensureLeaf keeps the leaf of profile prof when it fits and signs a new one when it does not: when
// it is missing, expired or not yet valid, signed by another CA, lacks a usage or a requested SAN,
// or carries another subject. A re-issued leaf keeps its key, and its SANs besides the requested
// ones, unless force is set.
func (r *run) ensureLeaf(ctx context.Context, prof profile, ca *caState, hosts []string, o leafOptions) (*KeyPair, error) {
	s, err := loadStored(r.dir, prof.name)
	if err != nil {
		return nil, err
	}
	reissue := func(reasons []string, key keyChoice, hosts []string) (*KeyPair, error) {
		if ca.external {
			caPath := CertPath(r.dir, ca.name)
			return nil, fmt.Errorf("%s must be signed (%s), but %s has no key in %s (external CA): have that CA sign it, or remove %s to let apictl create its own CA",
				s.certPath, orNew(reasons), caPath, r.dir, caPath)
		}
		return r.issueLeaf(ctx, s, leafRequest{commonName: prof.commonName, organizations: prof.organizations, hosts: hosts, usage: prof.usage},
			ca, key, o, ActionReissued, strings.Join(reasons, "; "))
	}
	switch {
	case s.certPEM == nil && s.keyPEM == nil:
		return reissue(nil, newKey, hosts)
	case o.force:
		return reissue([]string{"--force"}, newKey, hosts)
	case s.certErr != nil:
		return nil, fmt.Errorf("%w: %s", s.certErr, o.repair)
	case s.keyErr != nil:
		return nil, fmt.Errorf("%w: %s", s.keyErr, o.repair)
	case s.certPEM == nil:
		return reissue([]string{"certificate was missing"}, reuseKey, hosts)
	case s.keyPEM == nil:
		return reissue([]string{"key was missing"}, newKey, unionHosts(hosts, certHosts(s.cert)))
	case !keyMatches(s.cert, s.key):
		return nil, fmt.Errorf("%s does not match %s (key mismatch): %s", s.keyPath, s.certPath, o.repair)
	}
	var reasons []string
	if err := checkSignedBy(s.cert, ca.kp.Cert); err != nil {
		reasons = append(reasons, "not signed by "+CertPath(r.dir, ca.name))
	}
	for _, problem := range []string{timeProblem(s.cert, r.now), usageProblem(s.cert, prof.usage), prof.subjectMismatch(s.cert)} {
		if problem != "" {
			reasons = append(reasons, problem)
		}
	}
	if missing := missingHosts(s.cert, hosts); len(missing) > 0 {
		reasons = append(reasons, "SANs lacked "+strings.Join(missing, ", "))
	}
	if len(reasons) > 0 {
		return reissue(reasons, reuseKey, unionHosts(hosts, certHosts(s.cert)))
	}
	notAfter := s.cert.NotAfter
	r.record(s.name, s.keyPath, KindKey, ActionKept, "", nil)
	r.record(s.name, s.certPath, KindCertificate, ActionKept, "", &notAfter)
	return &KeyPair{Cert: s.cert, Key: s.key}, nil
}

func orNew(reasons []string) string {
	if len(reasons) == 0 {
		return "it does not exist"
	}
	return strings.Join(reasons, "; ")
}

// keyChoice says whether a re-issued certificate keeps its key.
type keyChoice bool

const (
	newKey   keyChoice = false
	reuseKey keyChoice = true
)

// issueLeaf has ca sign req for the pair s (reusing s's key if asked and present) and plans the
// pair's files. The certificate may not outlive its CA.
func (r *run) issueLeaf(ctx context.Context, s *stored, req leafRequest, ca *caState, key keyChoice, o leafOptions,
	action Action, reason string) (*KeyPair, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req.notBefore, req.notAfter = r.validity(o.validity)
	if req.notAfter.After(ca.kp.Cert.NotAfter) {
		return nil, flagErrorf("validity", FormatDuration(o.validity),
			"would make %s outlive its CA %s, which expires on %s: give a shorter --validity, or renew the CA with apictl certs renew %s --yes",
			s.certPath, CertPath(r.dir, ca.name), FormatTime(ca.kp.Cert.NotAfter), ca.name)
	}
	req.key = s.key
	if key == newKey || req.key == nil {
		k, err := generateKey(o.alg)
		if err != nil {
			return nil, fmt.Errorf("creating the key of %s: %w", s.keyPath, err)
		}
		req.key = k
	}
	cert, err := signLeaf(ca.kp, req)
	if err != nil {
		return nil, err
	}
	kp := &KeyPair{Cert: cert, Key: req.key}
	return kp, r.writePair(s, kp, action, reason)
}

// writePair plans kp's files: the key first (unless it is the one on disk), then the certificate, so
// that a reader who reloads when the certificate changes finds the matching key already in place.
// A file that did not exist is "created" whatever action the pair gets.
func (r *run) writePair(s *stored, kp *KeyPair, action Action, reason string) error {
	if s.key != nil && keyMatches(kp.Cert, s.key) {
		r.record(s.name, s.keyPath, KindKey, ActionKept, "", nil)
	} else {
		keyPEM, err := kp.KeyPEM()
		if err != nil {
			return fmt.Errorf("encoding %s: %w", s.keyPath, err)
		}
		r.files.add(s.keyPath, keyPEM, modeKey)
		if s.keyPEM == nil {
			r.record(s.name, s.keyPath, KindKey, ActionCreated, "", nil)
		} else {
			r.record(s.name, s.keyPath, KindKey, action, "new key", nil)
		}
	}
	notAfter := kp.Cert.NotAfter
	r.files.add(s.certPath, kp.CertPEM(), modeCert)
	if s.certPEM == nil {
		r.record(s.name, s.certPath, KindCertificate, ActionCreated, "", &notAfter)
	} else {
		r.record(s.name, s.certPath, KindCertificate, action, reason, &notAfter)
	}
	return nil
}

// ensureKubeconfig plans the kubeconfig at path for client unless the file already says exactly that.
func (r *run) ensureKubeconfig(path, server, user string, ca *x509.Certificate, client *KeyPair) error {
	data, err := kubeconfigFor(server, user, ca, client)
	if err != nil {
		return err
	}
	old, err := readOptional(path)
	if err != nil {
		return err
	}
	name, notAfter := filepath.Base(path), client.Cert.NotAfter
	switch {
	case old == nil:
		r.files.add(path, data, modeKubeconfig)
		r.record(name, path, KindKubeconfig, ActionCreated, "", &notAfter)
	case bytes.Equal(old, data):
		r.record(name, path, KindKubeconfig, ActionKept, "", &notAfter)
	default:
		reason := "embeds the current certificates and key"
		if was := kubeconfigServer(old); was != server {
			reason = fmt.Sprintf("server was %q", was)
		}
		r.files.add(path, data, modeKubeconfig)
		r.record(name, path, KindKubeconfig, ActionUpdated, reason, &notAfter)
	}
	return nil
}
