package certs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServingSpec says what EnsureServing makes. Start from NewServingSpec, which holds the defaults;
// a zero validity or port is an error, not a default.
type ServingSpec struct {
	// Dir is the cert dir; it and missing parents are created with mode 0700.
	Dir string
	// Hosts are SANs of the serving certificate beyond the ones it always carries: localhost,
	// 127.0.0.1, ::1, the host name, kubernetes, kubernetes.default, kubernetes.default.svc,
	// kubernetes.default.svc.cluster.local and the advertise address. IPs and DNS names; a DNS name
	// may start with "*.".
	Hosts []string
	// AdvertiseAddress is the IP clients reach the server at: a SAN, and the host of the admin
	// kubeconfig's server URL (127.0.0.1 when empty).
	AdvertiseAddress string
	// SecurePort is the port of the admin kubeconfig's server URL.
	SecurePort int
	// Hostname is the machine's name as a SAN; empty means os.Hostname, left out when it is not a
	// valid DNS name.
	Hostname string
	// KeyAlgorithm is the algorithm of new keys; empty means DefaultKeyAlgorithm. Existing keys are
	// kept whatever their algorithm unless Force (leaves) or ForceCA (CAs) replaces them.
	KeyAlgorithm KeyAlgorithm
	// Validity is how long new leaf certificates are valid; CAValidity, new CAs.
	Validity   time.Duration
	CAValidity time.Duration
	// Etcd adds an etcd CA with server, peer and apiserver-etcd-client certificates.
	Etcd bool
	// EtcdHosts are SANs of the etcd server and peer certificates beyond localhost, 127.0.0.1,
	// ::1, the host name and the advertise address.
	EtcdHosts []string
	// Force re-issues every leaf with a new key and exactly the requested SANs.
	Force bool
	// ForceCA replaces the CAs (with new keys), and so re-issues every leaf.
	ForceCA bool
}

// NewServingSpec returns the defaults for a cert dir.
func NewServingSpec(dir string) ServingSpec {
	return ServingSpec{
		Dir:        dir,
		SecurePort: DefaultSecurePort,
		Validity:   DefaultValidity,
		CAValidity: DefaultCAValidity,
	}
}

// servingPlan is a checked ServingSpec with everything derived from it.
type servingPlan struct {
	ServingSpec
	keyAlgorithm KeyAlgorithm
	apiHosts     []string
	etcdHosts    []string
	server       string
}

// plan checks the spec, reporting every problem at once, and derives the SAN lists.
func (s ServingSpec) plan() (*servingPlan, error) {
	alg, algErr := keyAlgorithmOrDefault(s.KeyAlgorithm)
	p := &servingPlan{ServingSpec: s, keyAlgorithm: alg}
	errs := []error{checkDir(s.Dir), algErr, checkValidity(s.Validity, s.CAValidity), checkSecurePort(s.SecurePort, "admin kubeconfig")}
	advertise, err := advertiseHost(s.AdvertiseAddress)
	errs = append(errs, err)
	hostname := s.Hostname
	if hostname == "" {
		hostname = machineHostname()
	} else if h, err := normalizeHost("hostname", hostname); err != nil {
		errs = append(errs, err)
	} else {
		hostname = h
	}
	extra, err := normalizeHosts("hosts", s.Hosts)
	errs = append(errs, err)
	etcdExtra, err := normalizeHosts("etcd-hosts", s.EtcdHosts)
	errs = append(errs, err)
	if len(s.EtcdHosts) > 0 && !s.Etcd {
		errs = append(errs, flagErrorf("etcd-hosts", strings.Join(s.EtcdHosts, ","), "is given without --etcd: add --etcd to create the etcd certificates"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	common := []string{"localhost"}
	if hostname != "" {
		common = appendHost(common, hostname)
	}
	p.apiHosts = unionHosts(append(common, serviceNames...), []string{"127.0.0.1", "::1"})
	p.etcdHosts = unionHosts(common, []string{"127.0.0.1", "::1"})
	if advertise != "" {
		p.apiHosts = appendHost(p.apiHosts, advertise)
		p.etcdHosts = appendHost(p.etcdHosts, advertise)
	}
	p.apiHosts = unionHosts(p.apiHosts, extra)
	p.etcdHosts = unionHosts(p.etcdHosts, etcdExtra)
	p.server = ServerURL(advertise, s.SecurePort)
	return p, nil
}

// checkSecurePort checks the port of the server URL written into a kubeconfig, named by what.
func checkSecurePort(port int, what string) error {
	if port < 1 || port > 65535 {
		return flagErrorf("secure-port", fmt.Sprint(port), "must be between 1 and 65535: the %s points at it", what)
	}
	return nil
}

// checkDir accepts a cert dir that exists as a directory or does not exist yet.
func checkDir(dir string) error {
	if dir == "" {
		return flagErrorf("cert-dir", "", "must not be empty: give a directory such as apictl.local/pki")
	}
	for p := dir; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			return nil
		case err == nil && p == dir:
			return flagErrorf("cert-dir", dir, "is a file, not a directory: give a directory path")
		case err == nil:
			return flagErrorf("cert-dir", dir, "cannot be created: %s is a file, not a directory", p)
		case filepath.Dir(p) == p:
			return nil
		}
	}
}

// checkValidity rejects validities that are not positive and leaves that would outlive their CA.
func checkValidity(validity, caValidity time.Duration) error {
	var errs []error
	if validity <= 0 {
		errs = append(errs, flagErrorf("validity", FormatDuration(validity), "must be greater than zero, like 1y or 8760h"))
	}
	if caValidity <= 0 {
		errs = append(errs, flagErrorf("ca-validity", FormatDuration(caValidity), "must be greater than zero, like 10y"))
	}
	if validity > 0 && caValidity > 0 && validity >= caValidity {
		errs = append(errs, flagErrorf("validity", FormatDuration(validity),
			"must be shorter than --ca-validity %s: a certificate cannot outlive the CA that signed it", FormatDuration(caValidity)))
	}
	return errors.Join(errs...)
}

// EnsureServing makes the cert dir hold a valid PKI for `apictl serve`, and is what `apictl certs
// init` runs. It keeps what exists and fits, creates what is missing, and re-issues leaves that have
// expired, were signed by another CA, lack a usage or a requested SAN, or carry the wrong subject
// (keeping their keys, and their old SANs besides the requested ones). It writes admin.kubeconfig,
// and the front proxy's own CA and client pair (front-proxy-ca, front-proxy-client) as kubeadm does.
// It also keeps or creates the service-account signing pair sa.key/sa.pub, which only
// `apictl certs renew sa` replaces.
// A CA is never replaced unless ForceCA is set; a ca.crt without ca.key is an external CA, against
// which leaves are checked but which cannot sign, so a leaf that needs signing is an error.
//
// Nothing is written unless every file could be made; files are written atomically, and a failure
// midway puts back what the run had written.
func EnsureServing(ctx context.Context, spec ServingSpec) (*Report, error) {
	return ensureServing(ctx, spec, atomicWriter{})
}

func ensureServing(ctx context.Context, spec ServingSpec, w fileWriter) (*Report, error) {
	p, err := spec.plan()
	if err != nil {
		return nil, err
	}
	r := newRun(p.Dir, time.Now())
	report := &Report{
		Dir:             p.Dir,
		CACert:          CertPath(p.Dir, NameCA),
		CAKey:           KeyPath(p.Dir, NameCA),
		ServingCert:     CertPath(p.Dir, NameAPIServer),
		ServingKey:      KeyPath(p.Dir, NameAPIServer),
		AdminKubeconfig: filepath.Join(p.Dir, AdminKubeconfigName),

		FrontProxyCACert:     CertPath(p.Dir, NameFrontProxyCA),
		FrontProxyClientCert: CertPath(p.Dir, NameFrontProxyClient),
		FrontProxyClientKey:  KeyPath(p.Dir, NameFrontProxyClient),
	}
	cas := map[string]*caState{}
	var errs []error
	leaves := map[string]*KeyPair{}
	for _, prof := range profiles {
		if prof.ca == NameEtcdCA && !p.Etcd {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ca, seen := cas[prof.ca]
		if !seen {
			ca, err = r.ensureCA(ctx, prof.ca, p.keyAlgorithm, p.CAValidity, p.ForceCA)
			cas[prof.ca] = ca
			if err != nil {
				errs = append(errs, err)
			}
		}
		if ca == nil {
			continue
		}
		var hosts []string
		switch prof.hosts {
		case hostsAPIServer:
			hosts = p.apiHosts
		case hostsEtcd:
			hosts = p.etcdHosts
		}
		kp, err := r.ensureLeaf(ctx, prof, ca, hosts, leafOptions{
			validity: p.Validity, alg: p.keyAlgorithm, force: p.Force,
			repair: "run apictl certs init --force to re-issue it, or remove it",
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		leaves[prof.name] = kp
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if report.ExternalCA = cas[NameCA].external; report.ExternalCA {
		report.CAKey = ""
	}
	if err := r.ensureServiceAccount(ctx, p.keyAlgorithm); err != nil {
		return nil, err
	}
	report.ServiceAccountKey, report.ServiceAccountPub = ServiceAccountKeyPath(p.Dir), ServiceAccountPubPath(p.Dir)
	if err := r.ensureKubeconfig(report.AdminKubeconfig, p.server, AdminUser, cas[NameCA].kp.Cert, leaves[NameAdmin]); err != nil {
		return nil, err
	}
	if err := r.files.commit(ctx, w); err != nil {
		return nil, err
	}
	report.Files = r.results
	return report, nil
}
