package apiserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/controllers/rootcacert"
	"github.com/apictl/apictl/pkg/serve/auth/serviceaccount"
)

// tokenClient is a client that presents token, trusting the server's CA.
func tokenClient(t *testing.T, s *servertest.Server, token string) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: s.SecureURL, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile}})
}

// TestServiceAccountTokens is the must-show with real kubectl: every namespace gets a
// default ServiceAccount and kube-root-ca.crt; `kubectl create token` issues a token that works as
// the ServiceAccount with RBAC applied, that an external verifier accepts from /openid/v1/jwks alone,
// and that stops working once the ServiceAccount is deleted (after the 10 s cache, as kube).
func TestServiceAccountTokens(t *testing.T) {
	s := servertest.Start(t, "--authorization-mode", "RBAC")
	ctx := context.Background()
	admin := adminClient(t, s)
	for _, ns := range []string{"team-a", "team-b"} {
		mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	var sa *corev1.ServiceAccount
	eventually(t, "team-a gets its default ServiceAccount", func() (err error) {
		sa, err = admin.CoreV1().ServiceAccounts("team-a").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	caPEM, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "team-a gets kube-root-ca.crt", func() error {
		cm, err := admin.CoreV1().ConfigMaps("team-a").Get(ctx, rootcacert.ConfigMapName, metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case cm.Data["ca.crt"] != string(caPEM) || len(cm.Data) != 1:
			return fmt.Errorf("data %v, want ca.crt = the serving CA", cm.Data)
		case cm.Annotations[rootcacert.DescriptionAnnotation] != rootcacert.Description:
			return fmt.Errorf("annotations %v", cm.Annotations)
		}
		return nil
	})
	// The publisher keeps the ConfigMap as it should be: a changed bundle is put back, a deleted one
	// recreated.
	cm, err := admin.CoreV1().ConfigMaps("team-a").Get(ctx, rootcacert.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["ca.crt"] = "tampered"
	if _, err := admin.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tampered bundle is restored", func() error {
		cm, err := admin.CoreV1().ConfigMaps("team-a").Get(ctx, rootcacert.ConfigMapName, metav1.GetOptions{})
		if err == nil && cm.Data["ca.crt"] != string(caPEM) {
			return fmt.Errorf("ca.crt %q", cm.Data["ca.crt"])
		}
		return err
	})
	if err := admin.CoreV1().ConfigMaps("team-b").Delete(ctx, rootcacert.ConfigMapName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, "the deleted kube-root-ca.crt of team-b is recreated", func() error {
		_, err := admin.CoreV1().ConfigMaps("team-b").Get(ctx, rootcacert.ConfigMapName, metav1.GetOptions{})
		return err
	})

	mustCreate(t, admin.RbacV1().RoleBindings("team-a").Create, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "sa-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "default"}}})

	out, code := kubectlRun(t, s.AdminKubeconfig, "create", "token", "default", "-n", "team-a", "--duration", "10m")
	if code != 0 {
		t.Fatalf("kubectl create token: %d %s", code, out)
	}
	token := strings.TrimSpace(out)
	client := tokenClient(t, s, token)
	eventually(t, "the token lists configmaps in team-a", func() error {
		_, err := client.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
		return err
	})
	_, err = client.CoreV1().ConfigMaps("team-b").List(ctx, metav1.ListOptions{})
	forbidden(t, err, `configmaps is forbidden: User "system:serviceaccount:team-a:default" cannot list resource "configmaps" in API group "" in the namespace "team-b"`)

	// What kubectl auth whoami shows, as on kube-apiserver v1.37.2 for a token of kubectl create token.
	kubeconfig := writeTokenKubeconfig(t, s, token)
	out, code = kubectlRun(t, kubeconfig, "auth", "whoami", "-o", "json")
	if code != 0 {
		t.Fatalf("kubectl auth whoami: %d %s", code, out)
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string              `json:"username"`
				UID      string              `json:"uid"`
				Groups   []string            `json:"groups"`
				Extra    map[string][]string `json:"extra"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &review); err != nil {
		t.Fatalf("whoami: %v\n%s", err, out)
	}
	claims := unverifiedClaims(t, token)
	u := review.Status.UserInfo
	if u.Username != "system:serviceaccount:team-a:default" || u.UID != string(sa.UID) ||
		strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:team-a,system:authenticated" ||
		len(u.Extra) != 1 || len(u.Extra[serviceaccount.ExtraCredentialID]) != 1 || u.Extra[serviceaccount.ExtraCredentialID][0] != "JTI="+claims.ID {
		t.Errorf("whoami %+v, token jti %s", u, claims.ID)
	}
	if got := claims.Expiry.Time().Sub(claims.IssuedAt.Time()); got != 10*time.Minute {
		t.Errorf("lifetime %v, want 10m", got)
	}

	verifyExternally(t, s, token)

	out, code = kubectlRun(t, s.AdminKubeconfig, "create", "token", "default", "-n", "team-a", "--duration", "5m")
	if want := `error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes`; code == 0 || strings.TrimSpace(out) != want {
		t.Errorf("5m: %d %q, want %q", code, out, want)
	}
	out, code = kubectlRun(t, s.AdminKubeconfig, "create", "token", "default", "-n", "team-a", "--bound-object-kind", "Pod", "--bound-object-name", "p1")
	if want := `error: failed to create token: pods "p1" not found`; code == 0 || strings.TrimSpace(out) != want {
		t.Errorf("bound to a missing pod: %d %q, want %q", code, out, want)
	}

	// A JWT of the same issuer signed by another key is refused.
	forged := forge(t, claims)
	if _, err := tokenClient(t, s, forged).CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("forged token: %v, want 401", err)
	}

	// Deleting the ServiceAccount invalidates its tokens; the controller's new default has another
	// UID, which does not revive them.
	if err := admin.CoreV1().ServiceAccounts("team-a").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(serviceaccount.DefaultCacheTTL + 5*time.Second)
	for {
		_, err := client.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
		if apierrors.IsUnauthorized(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token of a deleted ServiceAccount still answers %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	eventually(t, "the default ServiceAccount comes back", func() error {
		again, err := admin.CoreV1().ServiceAccounts("team-a").Get(ctx, "default", metav1.GetOptions{})
		if err == nil && again.UID == sa.UID {
			return fmt.Errorf("same UID %s", again.UID)
		}
		return err
	})
	if _, err := client.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("token after the ServiceAccount was recreated: %v, want 401", err)
	}
}

// writeTokenKubeconfig writes a kubeconfig that presents token to s.
func writeTokenKubeconfig(t *testing.T, s *servertest.Server, token string) string {
	t.Helper()
	path := t.TempDir() + "/token.kubeconfig"
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: c, context: {cluster: s, user: u}}]
current-context: c
`, s.SecureURL, s.CAFile, token)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func unverifiedClaims(t *testing.T, token string) jwt.Claims {
	t.Helper()
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// verifyExternally is a relying party that knows only /openid/v1/jwks (fetched with the token
// itself: RBAC grants discovery to system:serviceaccounts) and verifies the token with go-jose.
func verifyExternally(t *testing.T, s *servertest.Server, token string) {
	t.Helper()
	hc, err := s.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, s.SecureURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return resp, body
	}
	resp, body := get("/openid/v1/jwks")
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); ct != "application/jwk-set+json" || cc != "public, max-age=3600" {
		t.Errorf("jwks headers: Content-Type %q, Cache-Control %q", ct, cc)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("jwks has %d keys for kid %q: %s", len(keys), tok.Headers[0].KeyID, body)
	}
	var c jwt.Claims
	if err := tok.Claims(keys[0].Key, &c); err != nil {
		t.Fatalf("verifying with the published key: %v", err)
	}
	if err := c.Validate(jwt.Expected{Issuer: "https://kubernetes.default.svc.cluster.local",
		Subject: "system:serviceaccount:team-a:default", AnyAudience: jwt.Audience{"https://kubernetes.default.svc.cluster.local"}}); err != nil {
		t.Errorf("claims: %v", err)
	}
	resp, body = get("/.well-known/openid-configuration")
	want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"` + s.SecureURL + `/openid/v1/jwks",` +
		`"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}`
	if string(body) != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("openid-configuration %s (%s), want %s", body, resp.Header.Get("Content-Type"), want)
	}
}

// forge signs claims like the server's with a key the server does not know.
func forge(t *testing.T, claims jwt.Claims) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
