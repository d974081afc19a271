package certs

import (
	"crypto/x509"
	"errors"
	"net"
	"os"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// serviceNames are the names pods use for the API server, which kube-apiserver's serving
// certificate also carries, so that in-cluster clients written for Kubernetes verify apictl too.
var serviceNames = []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

var looksLikeIPv4 = regexp.MustCompile(`^[0-9]+(\.[0-9]+)+$`)

// normalizeHost checks one SAN and returns its canonical form: an IP address as Go prints it, a DNS
// name in lower case. A DNS name may start with a "*." wildcard label.
func normalizeHost(flag, host string) (string, error) {
	h := strings.TrimSpace(host)
	if h == "" {
		return "", flagErrorf(flag, "", "has an empty entry: remove the stray comma")
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	switch {
	case looksLikeIPv4.MatchString(h):
		return "", flagErrorf(flag, h, "looks like an IPv4 address but is not one: it needs four numbers from 0 to 255, like 10.0.0.5")
	case strings.Contains(h, "://"):
		return "", flagErrorf(flag, h, "is a URL: give the host name or IP address alone, like api.example.com")
	case strings.Contains(h, "/"):
		return "", flagErrorf(flag, h, "is not a host: a certificate names single IP addresses and DNS names, not networks or paths")
	}
	if name, port, err := net.SplitHostPort(h); err == nil && port != "" {
		return "", flagErrorf(flag, h, "includes a port: give the host alone, like %s", name)
	}
	if strings.Contains(h, ":") {
		return "", flagErrorf(flag, h, "looks like an IPv6 address but is not one: give a valid address such as fd00::5")
	}
	name := strings.ToLower(h)
	var problems []string
	if strings.HasPrefix(name, "*.") {
		problems = validation.IsWildcardDNS1123Subdomain(name)
	} else {
		problems = validation.IsDNS1123Subdomain(name)
	}
	switch {
	case len(problems) == 0:
		return name, nil
	case len(name) > validation.DNS1123SubdomainMaxLength:
		return "", flagErrorf(flag, h, "is longer than a DNS name may be (%d characters)", validation.DNS1123SubdomainMaxLength)
	}
	return "", flagErrorf(flag, h, "is neither an IP address nor a valid DNS name: a DNS name is letters, digits, '-' and '.', "+
		"each label starting and ending with a letter or digit, like api.example.com (a leading *. makes a wildcard)")
}

// normalizeHosts checks every entry and reports every bad one at once; duplicates are dropped.
func normalizeHosts(flag string, hosts []string) ([]string, error) {
	var out []string
	var errs []error
	for _, h := range hosts {
		n, err := normalizeHost(flag, h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = appendHost(out, n)
	}
	return out, errors.Join(errs...)
}

// appendHost adds h unless the list has it already.
func appendHost(list []string, h string) []string {
	for _, have := range list {
		if have == h {
			return list
		}
	}
	return append(list, h)
}

// unionHosts returns a followed by what b adds, without duplicates.
func unionHosts(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, h := range b {
		out = appendHost(out, h)
	}
	return out
}

// machineHostname is this machine's name in lower case when it can be a DNS SAN, else "".
func machineHostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	h = strings.ToLower(h)
	if len(validation.IsDNS1123Subdomain(h)) > 0 {
		return ""
	}
	return h
}

// certHosts lists a certificate's DNS and IP SANs in canonical form.
func certHosts(cert *x509.Certificate) []string {
	var out []string
	for _, d := range cert.DNSNames {
		out = appendHost(out, strings.ToLower(d))
	}
	for _, ip := range cert.IPAddresses {
		out = appendHost(out, ip.String())
	}
	return out
}

// missingHosts lists the wanted SANs the certificate lacks. Coverage is literal: a wildcard SAN does
// not stand in for a name that was asked for by itself.
func missingHosts(cert *x509.Certificate, want []string) []string {
	have := map[string]bool{}
	for _, h := range certHosts(cert) {
		have[h] = true
	}
	var missing []string
	for _, h := range want {
		if !have[h] {
			missing = append(missing, h)
		}
	}
	return missing
}

// advertiseHost checks --advertise-address and returns it in canonical form: "" when it is empty or
// unspecified (0.0.0.0, ::), which names no address a client can reach.
func advertiseHost(addr string) (string, error) {
	if addr == "" {
		return "", nil
	}
	ip := net.ParseIP(addr)
	switch {
	case ip == nil:
		return "", flagErrorf("advertise-address", addr, "is not an IP address: give an IPv4 or IPv6 address such as 10.0.0.5")
	case ip.IsUnspecified():
		return "", nil
	}
	return ip.String(), nil
}
