package certs

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServerURL is the address kubeconfigs point at: https://<advertise address or 127.0.0.1>:<port>,
// with an IPv6 address in brackets.
func ServerURL(advertiseAddress string, port int) string {
	host := "127.0.0.1"
	if ip := net.ParseIP(advertiseAddress); ip != nil && !ip.IsUnspecified() {
		host = ip.String()
	}
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// checkServerURL accepts an https URL with a host and nothing else a kubeconfig server cannot use.
func checkServerURL(flag, server string) error {
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" {
		return flagErrorf(flag, server, "must be an https:// URL with a host, like https://10.0.0.5:6443")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return flagErrorf(flag, server, "must not carry user information, a query or a fragment")
	}
	return nil
}

// kubeconfigFor writes a kubeconfig for one client certificate: one cluster "apictl" with the CA
// embedded, one user with the certificate and key embedded, and a current context user@apictl, so
// that the file works wherever it is copied.
func kubeconfigFor(server, user string, ca *x509.Certificate, client *KeyPair) ([]byte, error) {
	keyPEM, err := client.KeyPEM()
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", user, err)
	}
	context := user + "@" + kubeconfigCluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigCluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: encodeCert(ca)}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: client.CertPEM(), ClientKeyData: keyPEM}
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: kubeconfigCluster, AuthInfo: user}
	cfg.CurrentContext = context
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", user, err)
	}
	return data, nil
}

// kubeconfigServer returns the server of a kubeconfig's current context, or "" when the file is
// missing or does not say.
func kubeconfigServer(data []byte) string {
	cfg, err := clientcmd.Load(data)
	if err != nil || cfg == nil {
		return ""
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return ""
	}
	if cluster, ok := cfg.Clusters[ctx.Cluster]; ok {
		return cluster.Server
	}
	return ""
}
