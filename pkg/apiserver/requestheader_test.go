package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/certs"
)

// tlsClient returns a client of s that trusts its CA and presents pair, as curl does, whatever CAs
// the server names as acceptable.
func tlsClient(t *testing.T, s *servertest.Server, pair tls.Certificate) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }},
	}}
}

func loadPair(t *testing.T, dir, name string) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certs.CertPath(dir, name), certs.KeyPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// signClient has the CA called caName in dir sign a client certificate for cn.
func signClient(t *testing.T, dir, caName, cn string) tls.Certificate {
	t.Helper()
	ca := loadPair(t, dir, caName)
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// asProxy lists configmaps in default with the front proxy's headers naming alice in dev, and
// returns the status code and the Status message, if any.
func asProxy(t *testing.T, s *servertest.Server, c *http.Client) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.SecureURL+"/api/v1/namespaces/default/configmaps", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Remote-User", "alice")
	req.Header.Add("X-Remote-Group", "dev")
	req.Header.Set("X-Remote-Extra-Scopes", "view")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var status metav1.Status
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(body, &status); err != nil {
			t.Fatalf("%d with a body that is no Status: %v\n%s", resp.StatusCode, err, body)
		}
	}
	return resp.StatusCode, status.Message
}

const aliceForbidden = `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"`

// TestFrontProxyAuthentication checks the request-header authenticator that apictl serve sets up from
// its bootstrapped PKI, against what kube-apiserver v1.37.2 answers with kubeadm's settings.
func TestFrontProxyAuthentication(t *testing.T) {
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	tests := []struct {
		name     string
		pair     tls.Certificate
		wantCode int
		wantMsg  string
	}{
		// The proxy asserts alice in dev: RBAC judges alice, and says so.
		{"front-proxy-client is alice", loadPair(t, s.CertDir, certs.NameFrontProxyClient), http.StatusForbidden, aliceForbidden},
		// The admin's certificate comes from the client CA: its headers are ignored, it stays admin.
		{"the admin cannot assert a user", loadPair(t, s.CertDir, certs.NameAdmin), http.StatusOK, ""},
		// Signed by the front-proxy CA, but not an allowed name: kube answers 401.
		{"a disallowed proxy name", signClient(t, s.CertDir, certs.NameFrontProxyCA, "other-proxy"), http.StatusUnauthorized, "Unauthorized"},
		// Signed by the client CA with the proxy's name: an ordinary user named front-proxy-client.
		{"the proxy's name from the client CA", signClient(t, s.CertDir, certs.NameCA, certs.FrontProxyClientName), http.StatusForbidden,
			`configmaps is forbidden: User "front-proxy-client" cannot list resource "configmaps" in API group "" in the namespace "default"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := asProxy(t, s, tlsClient(t, s, tt.pair))
			if code != tt.wantCode || msg != tt.wantMsg {
				t.Fatalf("%d %q, want %d %q", code, msg, tt.wantCode, tt.wantMsg)
			}
		})
	}

	// The proxy without a user header is not a user at all: its certificate is not the client CA's.
	req, _ := http.NewRequest(http.MethodGet, s.SecureURL+"/api/v1/namespaces/default/configmaps", nil)
	resp, err := tlsClient(t, s, loadPair(t, s.CertDir, certs.NameFrontProxyClient)).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("proxy without X-Remote-User: %d, want 401 as kube answers", resp.StatusCode)
	}
	// The handshake names both CAs as acceptable, the client CA first, as kube's does.
	var acceptable []string
	proxyPair := loadPair(t, s.CertDir, certs.NameFrontProxyClient)
	c := tlsClient(t, s, proxyPair)
	c.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		for _, raw := range cri.AcceptableCAs {
			var rdn pkix.RDNSequence
			if _, err := asn1.Unmarshal(raw, &rdn); err != nil {
				return nil, err
			}
			var name pkix.Name
			name.FillFromRDNSequence(&rdn)
			acceptable = append(acceptable, name.CommonName)
		}
		return &proxyPair, nil
	}
	if code, msg := asProxy(t, s, c); code != http.StatusForbidden || msg != aliceForbidden {
		t.Errorf("proxy choosing its certificate from the acceptable CAs: %d %q", code, msg)
	}
	if want := []string{"apictl-ca", "front-proxy-ca"}; !slices.Equal(acceptable, want) {
		t.Errorf("acceptable CAs %v, want %v", acceptable, want)
	}
	// The default front-proxy settings have a line of their own only at -v 4; the start names the method.
	if want := "front-proxy request headers"; !strings.Contains(s.Logs.String(), want) {
		t.Errorf("the logs do not say %q:\n%s", want, s.Logs)
	}
}

// TestFrontProxyCAReload starts with a --requestheader-client-ca-file that does not trust the proxy,
// then replaces the file: the running server trusts the proxy without a restart.
func TestFrontProxyCAReload(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "requestheader-ca.crt")
	writeSelfSignedCA(t, caFile)
	s := servertest.Start(t, "--authorization-mode", "RBAC",
		"--requestheader-client-ca-file", caFile, "--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group")
	proxy := tlsClient(t, s, loadPair(t, s.CertDir, certs.NameFrontProxyClient))
	if code, _ := asProxy(t, s, proxy); code != http.StatusUnauthorized {
		t.Fatalf("before the CA file names the proxy's CA: %d, want 401", code)
	}
	data, err := os.ReadFile(certs.CertPath(s.CertDir, certs.NameFrontProxyCA))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reloaded CA file", func() error {
		if code, msg := asProxy(t, s, proxy); code != http.StatusForbidden || msg != aliceForbidden {
			return &unexpected{code, msg}
		}
		return nil
	})
}

type unexpected struct {
	code int
	msg  string
}

func (u *unexpected) Error() string { return http.StatusText(u.code) + ": " + u.msg }

func writeSelfSignedCA(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "unrelated-ca"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
