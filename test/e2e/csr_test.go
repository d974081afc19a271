package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestOnboardUserWithCSR is issue 35's must-show for CertificateSigningRequests, with the real
// kubectl: apictl certs request makes bob's key and submits his request, kubectl certificate
// approve approves it, the server's signer signs it within a second, apictl certs fetch writes his
// kubeconfig, and that kubeconfig is bob under RBAC: refused before a RoleBinding, allowed after.
func TestOnboardUserWithCSR(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--authorization-mode", "RBAC")
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	pki := filepath.Join(dir, "apictl.local", "pki")
	userDir := t.TempDir()
	admin := []string{"--kubeconfig", filepath.Join(pki, "admin.kubeconfig")}
	bob := []string{"--kubeconfig", filepath.Join(userDir, "bob.kubeconfig")}
	apictl := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(args, "--cert-dir", pki, "--dir", userDir)...).CombinedOutput()
		return string(out), err
	}

	if out, err := apictl("certs", "request", "bob", "--groups", "devs", "--expiration", "1d"); err != nil {
		t.Fatalf("apictl certs request: %v\n%s", err, out)
	}
	if out, err := apictl("certs", "fetch", "bob"); err == nil || !strings.Contains(out, "kubectl certificate approve bob") {
		t.Fatalf("apictl certs fetch before the approval: %v, want a failure that says how to approve:\n%s", err, out)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(pki, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg).CertificatesV1().CertificateSigningRequests()
	kubectl(t, append(admin, "certificate", "approve", "bob")...)
	approved := time.Now()
	for {
		csr, err := client.Get(context.Background(), "bob", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(csr.Status.Certificate) > 0 {
			break
		}
		if time.Since(approved) > 10*time.Second {
			t.Fatalf("bob's request is not signed 10s after its approval: %+v", csr.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	signed := time.Since(approved)
	t.Logf("signed %s after kubectl certificate approve returned", signed)
	if signed > time.Second {
		t.Errorf("signed %s after the approval, want within a second", signed)
	}

	if out, err := apictl("certs", "fetch", "bob"); err != nil {
		t.Fatalf("apictl certs fetch: %v\n%s", err, out)
	}
	if out := kubectl(t, append(bob, "auth", "whoami")...); !strings.Contains(out, "bob") || !strings.Contains(out, "devs") {
		t.Errorf("kubectl auth whoami as bob:\n%s", out)
	}
	if out, ok := kubectlResult(t, append(bob, "get", "configmaps", "-n", "default")...); ok || !strings.Contains(out, `User "bob" cannot list resource "configmaps"`) {
		t.Errorf("bob lists configmaps before any RoleBinding: ok=%v\n%s", ok, out)
	}
	kubectl(t, append(admin, "create", "rolebinding", "bob-view", "--clusterrole", "view", "--user", "bob", "-n", "default")...)
	waitFor(t, 10*time.Second, "bob may list configmaps", func() bool {
		_, ok := kubectlResult(t, append(bob, "get", "configmaps", "-n", "default")...)
		return ok
	})
}
