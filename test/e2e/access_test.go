package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"

	"github.com/apictl/apictl/internal/testtool"
)

// kubectlResult runs the real kubectl and returns its output and whether it succeeded.
func kubectlResult(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(testtool.Tool(t, "kubectl"), append([]string{"--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestAccessWithRBAC is issue 13's must-show, with stock kubectl against `apictl serve` with its
// default --authorization-mode, RBAC (issue 36): a user with a client certificate gets exactly what a RoleBinding gives
// her group, kube's 403 messages elsewhere, can list her rules, cannot escalate; an admin checks her
// access with --as; `kubectl auth whoami` knows a certificate, a static token and a service-account
// token; alice may not delete namespaces until a ClusterRoleBinding grants it; a token from `kubectl create token` works with its RBAC rules, is verified by an outsider
// from the JWKS alone, and stops working once its ServiceAccount is gone.
func TestAccessWithRBAC(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("carol-secret-token,carol,carol-uid,\"ops,readers\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The default is the point: no mode from the environment either (an empty variable is unset).
	t.Setenv("APICTL_AUTHORIZATION_MODE", "")
	p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--token-auth-file", tokens)
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	pki := filepath.Join(dir, "apictl.local", "pki")
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	admin := []string{"--kubeconfig", filepath.Join(pki, "admin.kubeconfig")}
	withToken := func(token string) []string {
		return []string{"-s", server, "--certificate-authority", filepath.Join(pki, "ca.crt"), "--token", token}
	}
	k := func(conn []string, args ...string) string { t.Helper(); return kubectl(t, append(conn, args...)...) }
	refused := func(conn []string, want string, args ...string) {
		t.Helper()
		out, ok := kubectlResult(t, append(conn, args...)...)
		if ok || !strings.Contains(out, want) {
			t.Errorf("kubectl %s: ok=%v, want a failure with %q:\n%s", strings.Join(args, " "), ok, want, out)
		}
	}
	eventually := func(what string, conn []string, args ...string) string {
		t.Helper()
		var out string
		waitFor(t, 15*time.Second, what, func() bool {
			var ok bool
			out, ok = kubectlResult(t, append(conn, args...)...)
			return ok
		})
		return out
	}

	apictl := exec.Command(binary, "certs", "client", "alice", "--groups", "dev", "--cert-dir", pki, "--server", server)
	if out, err := apictl.CombinedOutput(); err != nil {
		t.Fatalf("apictl certs client alice: %v\n%s", err, out)
	}
	alice := []string{"--kubeconfig", filepath.Join(pki, "alice.kubeconfig")}
	// The report: under AlwaysAllow, every certificate the CA signs had the cluster.
	canDeleteNamespaces := func() string {
		out, _ := kubectlResult(t, append(alice, "auth", "can-i", "delete", "namespaces")...)
		// The answer is the last line, after kubectl's warning that namespaces are not namespaced.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	if got := canDeleteNamespaces(); got != "no" {
		t.Errorf("kubectl auth can-i delete namespaces as alice, before any binding: %q, want no", got)
	}
	k(admin, "create", "namespace", "team-a")
	k(admin, "create", "namespace", "team-b")
	k(admin, "-n", "team-a", "create", "rolebinding", "dev-edit", "--clusterrole=edit", "--group=dev")

	eventually("alice to create a ConfigMap in team-a", alice, "-n", "team-a", "create", "configmap", "mine", "--from-literal=a=1")
	refused(alice, `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"`,
		"-n", "team-b", "create", "configmap", "theirs", "--from-literal=a=1")
	refused(alice, `Error from server (Forbidden): namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`,
		"get", "namespaces")

	rules := k(alice, "auth", "can-i", "--list", "-n", "team-a")
	if !strings.Contains(rules, "configmaps") || !strings.Contains(rules, "selfsubjectaccessreviews.authorization.k8s.io") {
		t.Errorf("kubectl auth can-i --list for alice:\n%s", rules)
	}
	if out := k(admin, "auth", "can-i", "create", "configmaps", "-n", "team-a", "--as", "alice", "--as-group", "dev"); strings.TrimSpace(out) != "yes" {
		t.Errorf("can alice (in dev) create configmaps in team-a: %q", out)
	}
	if out, _ := kubectlResult(t, append(admin, "auth", "can-i", "create", "roles", "-n", "team-a", "--as", "alice")...); strings.TrimSpace(out) != "no" {
		t.Errorf("can alice create roles in team-a: %q, want no", out)
	}
	refused(alice, "Forbidden", "-n", "team-a", "get", "configmaps", "--as", "apictl-admin")

	// alice may write RoleBindings in team-a, but not grant what she does not hold.
	k(admin, "-n", "team-a", "create", "role", "binder", "--verb=create,get,list", "--resource=rolebindings.rbac.authorization.k8s.io")
	k(admin, "-n", "team-a", "create", "rolebinding", "alice-binder", "--role=binder", "--user=alice")
	eventually("alice to list RoleBindings in team-a", alice, "-n", "team-a", "get", "rolebindings")
	refused(alice, "is attempting to grant RBAC permissions not currently held",
		"-n", "team-a", "create", "rolebinding", "alice-admin", "--clusterrole=admin", "--user=alice")

	k(admin, "create", "clusterrole", "namespace-deleter", "--verb=delete", "--resource=namespaces")
	k(admin, "create", "clusterrolebinding", "alice-deletes-namespaces", "--clusterrole=namespace-deleter", "--user=alice")
	waitFor(t, 15*time.Second, "alice to be allowed to delete namespaces", func() bool {
		return canDeleteNamespaces() == "yes"
	})

	for _, who := range []struct {
		name string
		conn []string
		want []string
	}{
		{"client certificate", alice, []string{"alice", "dev"}},
		{"token file", withToken("carol-secret-token"), []string{"carol", "ops", "readers"}},
	} {
		out := k(who.conn, "auth", "whoami")
		for _, w := range who.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl auth whoami with a %s: no %q in\n%s", who.name, w, out)
			}
		}
	}

	// A service account's token: its identity, its RBAC rules, an outsider's verification, its end.
	eventually("team-a's default ServiceAccount", admin, "-n", "team-a", "get", "serviceaccount", "default")
	token := strings.TrimSpace(k(admin, "-n", "team-a", "create", "token", "default", "--duration", "10m"))
	sa := withToken(token)
	if out := k(sa, "auth", "whoami"); !strings.Contains(out, "system:serviceaccount:team-a:default") || !strings.Contains(out, "system:serviceaccounts:team-a") {
		t.Errorf("kubectl auth whoami with a service-account token:\n%s", out)
	}
	refused(sa, "Forbidden", "-n", "team-a", "get", "configmaps")
	k(admin, "-n", "team-a", "create", "rolebinding", "sa-view", "--clusterrole=view", "--serviceaccount=team-a:default")
	eventually("the service account to read team-a's ConfigMaps", sa, "-n", "team-a", "get", "configmaps", "mine")
	refused(sa, "Forbidden", "-n", "team-b", "get", "configmaps")

	jwks := k(sa, "get", "--raw", "/openid/v1/jwks")
	verifyOutside(t, token, jwks)
	// kubectl's words for a 401.
	const unauthorized = "You must be logged in to the server"
	refused(withToken(forgedToken(t, token)), unauthorized, "-n", "team-a", "get", "configmaps")

	k(admin, "-n", "team-a", "delete", "serviceaccount", "default")
	waitFor(t, 30*time.Second, "the deleted ServiceAccount's token to be refused", func() bool {
		out, ok := kubectlResult(t, append(sa, "-n", "team-a", "get", "configmaps", "mine")...)
		return !ok && strings.Contains(out, unauthorized)
	})
}

// verifyOutside verifies token the way another system does, with only the JWKS document: the
// signature by one of its keys, and the claims.
func verifyOutside(t *testing.T, token, jwksJSON string) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal([]byte(jwksJSON), &set); err != nil {
		t.Fatalf("the JWKS: %v\n%s", err, jwksJSON)
	}
	parsed, err := josejwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.PS256})
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed.Headers) != 1 {
		t.Fatalf("%d signatures", len(parsed.Headers))
	}
	keys := set.Key(parsed.Headers[0].KeyID)
	if len(keys) == 0 {
		t.Fatalf("no key %q in the JWKS:\n%s", parsed.Headers[0].KeyID, jwksJSON)
	}
	var claims josejwt.Claims
	if err := parsed.Claims(keys[0].Key, &claims); err != nil {
		t.Fatalf("the token does not verify with the published key: %v", err)
	}
	if err := claims.ValidateWithLeeway(josejwt.Expected{Time: time.Now()}, 0); err != nil {
		t.Errorf("claims: %v", err)
	}
	if claims.Subject != "system:serviceaccount:team-a:default" {
		t.Errorf("subject %q", claims.Subject)
	}
}

// forgedToken re-signs token's claims with a key of the forger's own.
func forgedToken(t *testing.T, token string) string {
	t.Helper()
	parsed, err := josejwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.PS256})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", parsed.Headers[0].KeyID))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := josejwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return forged
}
