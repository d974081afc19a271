package certs

import (
	"crypto/x509"
	"slices"
	"strings"
)

// usage is what a leaf certificate is for, as extended key usages.
type usage int

const (
	usageServer usage = 1 << iota
	usageClient
)

func (u usage) String() string {
	var parts []string
	if u&usageServer != 0 {
		parts = append(parts, "server auth")
	}
	if u&usageClient != 0 {
		parts = append(parts, "client auth")
	}
	return strings.Join(parts, "+")
}

// usageOf reads the TLS usages a certificate allows. A certificate without extended key usages, or
// with "any", allows both, as Go and openssl treat it.
func usageOf(cert *x509.Certificate) usage {
	if len(cert.ExtKeyUsage) == 0 {
		return usageServer | usageClient
	}
	var u usage
	for _, e := range cert.ExtKeyUsage {
		switch e {
		case x509.ExtKeyUsageServerAuth:
			u |= usageServer
		case x509.ExtKeyUsageClientAuth:
			u |= usageClient
		case x509.ExtKeyUsageAny:
			u |= usageServer | usageClient
		}
	}
	return u
}

// Names of the certificates `apictl certs init` creates, as file stems in the cert dir. They are
// also what `apictl certs renew` takes.
const (
	NameCA                  = "ca"
	NameAPIServer           = "apiserver"
	NameAdmin               = "admin"
	NameEtcdCA              = "etcd/ca"
	NameEtcdServer          = "etcd/server"
	NameEtcdPeer            = "etcd/peer"
	NameAPIServerEtcdClient = "apiserver-etcd-client"
	// NameFrontProxyCA signs the certificates of authenticating proxies (the aggregation layer),
	// whose requests carry the user in X-Remote-User headers; it is kept apart from ca so that no
	// ordinary client certificate can assert another user (kubeadm's front-proxy-ca).
	NameFrontProxyCA = "front-proxy-ca"
	// NameFrontProxyClient is the proxy's client pair, signed by front-proxy-ca.
	NameFrontProxyClient = "front-proxy-client"
)

// AdminKubeconfigName is the kubeconfig `apictl certs init` writes for the admin certificate.
const AdminKubeconfigName = "admin.kubeconfig"

// Names in the kubeconfigs apictl writes.
const (
	kubeconfigCluster = "apictl"
	// AdminUser is the admin certificate's common name and its kubeconfig user.
	AdminUser = "apictl-admin"
	// AdminGroup makes the admin a superuser for any authorizer that follows Kubernetes.
	AdminGroup = "system:masters"
	// FrontProxyClientName is the front-proxy client certificate's common name, the one name
	// apictl serve allows to assert users in request headers when it bootstraps its PKI.
	FrontProxyClientName = "front-proxy-client"
)

// profile is a certificate apictl knows by name: its subject, its usage, which CA signs it and
// whether it names hosts.
type profile struct {
	name          string
	commonName    string
	organizations []string
	usage         usage
	ca            string
	// hosts says which SANs the certificate carries: none, the API server's or etcd's.
	hosts hostKind
}

type hostKind int

const (
	hostsNone hostKind = iota
	hostsAPIServer
	hostsEtcd
)

// caCommonNames are the subjects of the CAs apictl creates.
// The front proxy's names are kubeadm's, which --requestheader-allowed-names lists in most clusters.
var caCommonNames = map[string]string{NameCA: "apictl-ca", NameEtcdCA: "apictl-etcd-ca", NameFrontProxyCA: "front-proxy-ca"}

// profiles are the leaves `apictl certs init` creates, in the order it creates them.
var profiles = []profile{
	{name: NameAPIServer, commonName: "apictl-apiserver", usage: usageServer, ca: NameCA, hosts: hostsAPIServer},
	{name: NameAdmin, commonName: AdminUser, organizations: []string{AdminGroup}, usage: usageClient, ca: NameCA},
	{name: NameFrontProxyClient, commonName: FrontProxyClientName, usage: usageClient, ca: NameFrontProxyCA},
	// etcd wants server and client auth on its server and peer certificates (etcd-io/etcd#9785).
	{name: NameEtcdServer, commonName: "apictl-etcd-server", usage: usageServer | usageClient, ca: NameEtcdCA, hosts: hostsEtcd},
	{name: NameEtcdPeer, commonName: "apictl-etcd-peer", usage: usageServer | usageClient, ca: NameEtcdCA, hosts: hostsEtcd},
	{name: NameAPIServerEtcdClient, commonName: "apictl-apiserver-etcd-client", usage: usageClient, ca: NameEtcdCA},
}

// knownProfile returns the profile of a leaf apictl creates, if name is one.
func knownProfile(name string) (profile, bool) {
	for _, p := range profiles {
		if p.name == name {
			return p, true
		}
	}
	return profile{}, false
}

// isKnownCA reports whether name is one of the CAs apictl creates.
func isKnownCA(name string) bool {
	_, ok := caCommonNames[name]
	return ok
}

// reservedName reports whether a client certificate may not take name, because init uses it.
func reservedName(name string) bool {
	if isKnownCA(name) {
		return true
	}
	_, ok := knownProfile(name)
	return ok || strings.HasPrefix(name, "etcd/")
}

// subjectMismatch describes how a certificate's subject differs from the profile's, or "".
func (p profile) subjectMismatch(cert *x509.Certificate) string {
	orgs := slices.Clone(cert.Subject.Organization)
	want := slices.Clone(p.organizations)
	slices.Sort(orgs)
	slices.Sort(want)
	if cert.Subject.CommonName == p.commonName && slices.Equal(orgs, want) {
		return ""
	}
	return "subject is " + cert.Subject.String() + ", not " + p.subject()
}

func (p profile) subject() string {
	s := "CN=" + p.commonName
	for _, o := range p.organizations {
		s += ",O=" + o
	}
	return s
}
