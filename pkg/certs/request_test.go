package certs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
)

// TestRequestAndFetch runs both steps against a fake API, with the CA of a fresh cert dir signing
// in between as the server's signer would.
func TestRequestAndFetch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca := newTestCA(t)
	client := fake.NewClientset().CertificatesV1().CertificateSigningRequests()
	spec := CSRSpec{Name: "bob", Groups: []string{"devs"}, Kubeconfig: "unused", Dir: dir}
	sub := &submitter{csrs: client, server: "https://127.0.0.1:6443", caPEM: ca.CertPEM()}

	// A key that cannot be written takes the request back.
	if _, err := request(ctx, spec, DefaultKeyAlgorithm, client, &failingWriter{left: 0}); err == nil {
		t.Fatal("request succeeded though its key could not be written")
	}
	if list, _ := client.List(ctx, metav1.ListOptions{}); len(list.Items) != 0 {
		t.Fatalf("the request stayed without its key: %d requests", len(list.Items))
	}

	res, err := request(ctx, spec, DefaultKeyAlgorithm, client, atomicWriter{})
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(res.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch(ctx, spec, keyPEM, sub, atomicWriter{}); err == nil || !strings.Contains(err.Error(), "kubectl certificate approve bob") {
		t.Fatalf("fetch of a pending request: %v, want how to approve it", err)
	}

	csr, _ := client.Get(ctx, "bob", metav1.GetOptions{})
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || len(csr.Spec.Usages) != 2 {
		t.Errorf("request spec %+v", csr.Spec)
	}
	now := csr.CreationTimestamp.Time
	cert, err := Sign(ca, SignRequest{PEM: csr.Spec.Request, Usages: []string{"digital signature", "client auth"}, NotBefore: now, NotAfter: now.Add(24 * 3600e9)})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	csr.Status.Certificate = cert
	if _, err := client.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := fetch(ctx, spec, keyPEM, sub, atomicWriter{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(got.KubeconfigFile)
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	if string(user.ClientKeyData) != string(keyPEM) || string(user.ClientCertificateData) != string(cert) || cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server != sub.server {
		t.Errorf("kubeconfig %s does not hold bob's key, certificate and server", got.KubeconfigFile)
	}
	parsed, _ := parseCertsPEM(cert)
	if parsed[0].Subject.CommonName != "bob" || len(parsed[0].Subject.Organization) != 1 || parsed[0].Subject.Organization[0] != "devs" {
		t.Errorf("signed subject %s", parsed[0].Subject)
	}

	// A key that is not the request's is refused, and nothing is written.
	other := CSRSpec{Name: "bob", Kubeconfig: "unused", Dir: t.TempDir()}
	otherKey, _ := generateKey(DefaultKeyAlgorithm)
	otherPEM, _ := encodeKey(otherKey)
	if _, err := fetch(ctx, other, otherPEM, sub, atomicWriter{}); err == nil || !strings.Contains(err.Error(), "not for the key") {
		t.Errorf("fetch with another key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other.Dir, "bob.kubeconfig")); !os.IsNotExist(err) {
		t.Errorf("a kubeconfig was written for the wrong key: %v", err)
	}

	// A denied request says so.
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "NoWay"}}
	csr.Status.Certificate = nil
	_, _ = client.UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if _, err := fetch(ctx, spec, keyPEM, sub, atomicWriter{}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("fetch of a denied request: %v", err)
	}
}

func TestCSRSpecCheck(t *testing.T) {
	for _, tc := range []struct {
		spec CSRSpec
		want string
	}{
		{CSRSpec{Kubeconfig: "k"}, "give the user's name"},
		{CSRSpec{Name: "bob", Groups: []string{"system:masters"}, Kubeconfig: "k"}, "refused by the kube-apiserver-client signer"},
		{CSRSpec{Name: "bob", Expiration: 60e9, Kubeconfig: "k"}, "at least 10m"},
		{CSRSpec{Name: "../bob", Kubeconfig: "k"}, "it is also a file name"},
		{CSRSpec{Name: "bob"}, "--kubeconfig"},
	} {
		if _, err := tc.spec.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// newTestCA makes a CA as certs init does, in memory.
func newTestCA(t *testing.T) *KeyPair {
	t.Helper()
	key, err := generateKey(DefaultKeyAlgorithm)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := newCA(caRequest{commonName: "test-ca", validity: 24 * 3600e9 * 10, key: key})
	if err != nil {
		t.Fatal(err)
	}
	return &KeyPair{Cert: cert, Key: key}
}
