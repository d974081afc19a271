package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const testIssuer = "https://kubernetes.default.svc.cluster.local"

// fakeGetter holds object metadata by "resource/namespace/name".
type fakeGetter struct {
	mu      sync.Mutex
	objects map[string]*metav1.ObjectMeta
}

func newFakeGetter() *fakeGetter { return &fakeGetter{objects: map[string]*metav1.ObjectMeta{}} }

func (f *fakeGetter) put(resource, namespace, name, uid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[resource+"/"+namespace+"/"+name] = &metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(uid)}
}

func (f *fakeGetter) remove(resource, namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, resource+"/"+namespace+"/"+name)
}

func (f *fakeGetter) Get(_ context.Context, resource, namespace, name string) (*metav1.ObjectMeta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.objects[resource+"/"+namespace+"/"+name]; ok {
		c := *m
		return &c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func mustRSA(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustPublic(t testing.TB, k crypto.Signer) PublicKey {
	t.Helper()
	pk, err := NewPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

type fixture struct {
	key    *rsa.PrivateKey
	clk    *clock
	getter *fakeGetter
	issuer *Issuer
	authn  *Authenticator
}

func newFixture(t testing.TB, cacheTTL time.Duration) *fixture {
	t.Helper()
	f := &fixture{key: mustRSA(t), clk: &clock{t: time.Unix(1_800_000_000, 0)}, getter: newFakeGetter()}
	var err error
	if f.issuer, err = NewIssuer(testIssuer, f.key); err != nil {
		t.Fatal(err)
	}
	f.issuer.now = f.clk.now
	f.issuer.newID = func() string { return "8f9c1b7e-0000-4000-8000-000000000001" }
	f.getter.put("serviceaccounts", "team-a", "default", "uid-1")
	f.authn, err = NewAuthenticator(AuthenticatorConfig{
		Issuers: []string{"https://other.example", testIssuer}, Keys: []PublicKey{mustPublic(t, f.key)},
		Audiences: []string{testIssuer}, Getter: f.getter, CacheTTL: cacheTTL, Now: f.clk.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) token(t testing.TB, spec TokenSpec) string {
	t.Helper()
	if spec.Namespace == "" {
		spec.Namespace, spec.Name, spec.UID = "team-a", "default", "uid-1"
	}
	if spec.Audiences == nil {
		spec.Audiences = []string{testIssuer}
	}
	if spec.Expiration == 0 {
		spec.Expiration = time.Hour
	}
	tok, err := f.issuer.Issue(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

// TestKeyID pins kube's key ID: base64url(SHA-256(PKIX DER)) without padding, 43 characters.
func TestKeyID(t *testing.T) {
	// The RSA public key of kube's own tests (pkg/serviceaccount/jwt_test.go, keyid_test.go),
	// and the key ID kube computes for it.
	const pub = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----
`
	keys, err := ParsePublicKeysPEM([]byte(pub))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys[0].KeyID, "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"; got != want {
		t.Errorf("kid = %s, want %s", got, want)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if alg, _ := Algorithm(ec.Public()); alg != jose.ES256 {
		t.Errorf("P-256 algorithm = %s", alg)
	}
}

// TestClaims pins the claims and header of an issued token, as kube-apiserver v1.37.2 writes them
// (compared with a token of `kubectl create token` from the reference server).
func TestClaims(t *testing.T) {
	f := newFixture(t, -1)
	raw := f.token(t, TokenSpec{Namespace: "team-a", Name: "default", UID: "uid-1", Audiences: []string{"api", "vault"},
		Expiration: 600 * time.Second, Secret: &Ref{Name: "s", UID: "uid-s"}})
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	kid := mustPublic(t, f.key).KeyID
	if got, want := string(header), `{"alg":"RS256","kid":"`+kid+`"}`; got != want {
		t.Errorf("header = %s, want %s", got, want)
	}
	want := `{"aud":["api","vault"],"exp":1800000600,"iat":1800000000,"iss":"https://kubernetes.default.svc.cluster.local",` +
		`"jti":"8f9c1b7e-0000-4000-8000-000000000001","kubernetes.io":{"namespace":"team-a","secret":{"name":"s","uid":"uid-s"},` +
		`"serviceaccount":{"name":"default","uid":"uid-1"}},"nbf":1800000000,"sub":"system:serviceaccount:team-a:default"}`
	// A single audience is an array too, as in kube's tokens.
	single := f.token(t, TokenSpec{})
	if p, _ := base64.RawURLEncoding.DecodeString(strings.Split(single, ".")[1]); !strings.Contains(string(p), `"aud":["`+testIssuer+`"]`) {
		t.Errorf("single audience: %s", p)
	}
	// Byte for byte: kube's go-jose merges the claims into one map too, so keys come sorted.
	if string(payload) != want {
		t.Errorf("payload =\n%s\nwant\n%s", payload, want)
	}
}

func TestAuthenticate(t *testing.T) {
	other := mustRSA(t)
	for _, tc := range []struct {
		name string
		// prepare changes the fixture and returns the token to present.
		prepare   func(t *testing.T, f *fixture) string
		audiences []string
		wantOK    bool
		wantErr   string
	}{
		{name: "valid", wantOK: true, prepare: func(t *testing.T, f *fixture) string { return f.token(t, TokenSpec{}) }},
		{name: "valid within the leeway after expiry", wantOK: true, prepare: func(t *testing.T, f *fixture) string {
			tok := f.token(t, TokenSpec{Expiration: 10 * time.Minute})
			f.clk.add(10*time.Minute + 30*time.Second)
			return tok
		}},
		{name: "expired", wantErr: "service account token has expired", prepare: func(t *testing.T, f *fixture) string {
			tok := f.token(t, TokenSpec{Expiration: 10 * time.Minute})
			f.clk.add(11*time.Minute + time.Second)
			return tok
		}},
		{name: "not valid yet", wantErr: "service account token is not valid yet", prepare: func(t *testing.T, f *fixture) string {
			tok := f.token(t, TokenSpec{})
			f.clk.add(-2 * time.Minute)
			return tok
		}},
		{name: "signed by another key", wantErr: "invalid signature, no keys found", prepare: func(t *testing.T, f *fixture) string {
			iss, _ := NewIssuer(testIssuer, other)
			iss.now, iss.newID = f.clk.now, f.issuer.newID
			tok, _ := iss.Issue(TokenSpec{Namespace: "team-a", Name: "default", UID: "uid-1", Audiences: []string{testIssuer}, Expiration: time.Hour})
			return tok.Token
		}},
		{name: "another issuer is not ours", wantOK: false, prepare: func(t *testing.T, f *fixture) string {
			iss, _ := NewIssuer("https://elsewhere.example", f.key)
			iss.now, iss.newID = f.clk.now, f.issuer.newID
			tok, _ := iss.Issue(TokenSpec{Namespace: "team-a", Name: "default", UID: "uid-1", Audiences: []string{testIssuer}, Expiration: time.Hour})
			return tok.Token
		}},
		{name: "a second configured issuer", wantOK: true, prepare: func(t *testing.T, f *fixture) string {
			iss, _ := NewIssuer("https://other.example", f.key)
			iss.now, iss.newID = f.clk.now, f.issuer.newID
			tok, _ := iss.Issue(TokenSpec{Namespace: "team-a", Name: "default", UID: "uid-1", Audiences: []string{testIssuer}, Expiration: time.Hour})
			return tok.Token
		}},
		{name: "not a JWT", wantOK: false, prepare: func(*testing.T, *fixture) string { return "abcdef.0123456789abcdef" }},
		{name: "JSON", wantOK: false, prepare: func(*testing.T, *fixture) string { return `{"a":"b.c.d"}` }},
		{name: "wrong audience", prepare: func(t *testing.T, f *fixture) string { return f.token(t, TokenSpec{Audiences: []string{"vault"}}) },
			wantErr: `token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]`},
		{name: "requested audience", audiences: []string{"vault"}, wantOK: true,
			prepare: func(t *testing.T, f *fixture) string { return f.token(t, TokenSpec{Audiences: []string{"vault"}}) }},
		{name: "deleted service account", wantErr: `serviceaccounts "default" not found`, prepare: func(t *testing.T, f *fixture) string {
			tok := f.token(t, TokenSpec{})
			f.getter.remove("serviceaccounts", "team-a", "default")
			return tok
		}},
		{name: "recreated service account", wantErr: "service account UID (uid-2) does not match claim (uid-1)", prepare: func(t *testing.T, f *fixture) string {
			tok := f.token(t, TokenSpec{})
			f.getter.put("serviceaccounts", "team-a", "default", "uid-2")
			return tok
		}},
		{name: "deleted bound secret", wantErr: "service account token has been invalidated", prepare: func(t *testing.T, f *fixture) string {
			return f.token(t, TokenSpec{Secret: &Ref{Name: "gone", UID: "uid-s"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, -1)
			tok := tc.prepare(t, f)
			resp, ok, err := f.authn.AuthenticateToken(context.Background(), tok, tc.audiences)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("err = %v", err)
			case ok != tc.wantOK:
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			case !ok:
				return
			}
			u := resp.User
			if u.Name != "system:serviceaccount:team-a:default" || u.UID != "uid-1" ||
				strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:team-a" {
				t.Errorf("user = %+v", u)
			}
			if got := u.Extra[ExtraCredentialID]; len(got) != 1 || got[0] != "JTI=8f9c1b7e-0000-4000-8000-000000000001" {
				t.Errorf("credential id = %v", got)
			}
		})
	}
}

// TestCache pins the 10 s success cache: a deleted ServiceAccount's token keeps working until its
// entry expires, as on kube-apiserver, and never past the token's own expiry.
func TestCache(t *testing.T) {
	f := newFixture(t, 0)
	tok := f.token(t, TokenSpec{})
	ctx := context.Background()
	if _, ok, err := f.authn.AuthenticateToken(ctx, tok, nil); !ok || err != nil {
		t.Fatalf("first: %v %v", ok, err)
	}
	f.getter.remove("serviceaccounts", "team-a", "default")
	f.clk.add(9 * time.Second)
	if _, ok, err := f.authn.AuthenticateToken(ctx, tok, nil); !ok || err != nil {
		t.Fatalf("cached: %v %v", ok, err)
	}
	f.clk.add(2 * time.Second)
	if _, _, err := f.authn.AuthenticateToken(ctx, tok, nil); err == nil {
		t.Fatal("accepted after the cache entry expired")
	}
}

func TestDiscovery(t *testing.T) {
	key := mustRSA(t)
	pk := mustPublic(t, key)
	d, err := NewDiscovery(testIssuer, "", "10.0.0.1:6443", []PublicKey{pk})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks",` +
		`"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
	if string(d.ConfigJSON) != want {
		t.Errorf("config = %s\nwant %s", d.ConfigJSON, want)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(d.KeysetJSON, &set); err != nil || len(set.Keys) != 1 || set.Keys[0].KeyID != pk.KeyID || set.Keys[0].Use != "sig" {
		t.Errorf("keyset = %s (%v)", d.KeysetJSON, err)
	}
	if _, err := NewDiscovery("api", "", "10.0.0.1:6443", []PublicKey{pk}); err == nil || err.Error() != "issuer URL must use https scheme, got: api" {
		t.Errorf("non-https issuer: %v", err)
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	for _, bc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, bc.ttl)
			f.authn.cfg.Now = time.Now
			f.issuer.now = time.Now
			tok := f.token(b, TokenSpec{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, ok, err := f.authn.AuthenticateToken(ctx, tok, nil); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// TestJWKSMatchesKube checks the key set byte for byte against kube-apiserver v1.37.2's answer for
// the same public key (testdata/README.md).
func TestJWKSMatchesKube(t *testing.T) {
	keys, err := LoadPublicKeys("testdata/reference-sa.pub")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/reference-jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDiscovery(testIssuer, "", "127.0.0.1:6443", keys)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.KeysetJSON) != string(want) {
		t.Errorf("jwks =\n%s\nkube's:\n%s", d.KeysetJSON, want)
	}
}
