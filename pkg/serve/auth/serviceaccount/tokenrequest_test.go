package serviceaccount

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestTokenRequest(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name         string
		spec         authenticationv1.TokenRequestSpec
		uid          string
		max          time.Duration
		wantErr      string
		wantLifetime time.Duration
		wantWarning  string
		wantAud      string
		check        func(t *testing.T, claims map[string]any)
	}{
		{name: "defaults", wantLifetime: time.Hour, wantAud: testIssuer},
		{name: "audiences", spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}, wantLifetime: time.Hour, wantAud: "vault"},
		{name: "too short", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: i64(599)},
			wantErr: `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes`},
		{name: "too long", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: i64(1<<32 + 1)},
			wantErr: "may not specify a duration larger than 2^32 seconds"},
		{name: "capped", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: i64(7200)}, max: time.Hour, wantLifetime: time.Hour,
			wantAud: testIssuer, wantWarning: "requested expiration of 7200 seconds shortened to 3600 seconds"},
		{name: "uid mismatch", uid: "other", wantErr: `Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "default": the UID in the token request (other) does not match the UID of the service account (uid-1)`},
		{name: "bound secret", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s"}},
			wantLifetime: time.Hour, wantAud: testIssuer, check: func(t *testing.T, c map[string]any) {
				k := c["kubernetes.io"].(map[string]any)
				if s := k["secret"].(map[string]any); s["name"] != "s" || s["uid"] != "uid-s" {
					t.Errorf("secret claim %v", s)
				}
			}},
		{name: "bound secret with another uid", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: "old"}},
			wantErr: `Operation cannot be fulfilled on Secret "s": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{name: "missing pod", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p1"}},
			wantErr: `pods "p1" not found`},
		{name: "pod-bound kubelet token is extended", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: i64(WarnOnlyExpirationSeconds),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web"}},
			wantLifetime: ExtendedExpiration, wantAud: testIssuer, check: func(t *testing.T, c map[string]any) {
				k := c["kubernetes.io"].(map[string]any)
				if k["warnafter"] != float64(1_800_000_000+WarnOnlyExpirationSeconds) {
					t.Errorf("warnafter %v", k["warnafter"])
				}
			}},
		{name: "other kinds", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "c"}},
			wantErr: "cannot bind token to object of type /v1, Kind=ConfigMap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, -1)
			f.getter.put("secrets", "team-a", "s", "uid-s")
			f.getter.put("pods", "team-a", "web", "uid-p")
			r, err := NewTokenRequester(TokenRequestConfig{Issuer: f.issuer, Audiences: []string{testIssuer}, MaxExpiration: tc.max,
				ExtendExpiration: true, Getter: f.getter})
			if err != nil {
				t.Fatal(err)
			}
			r.now = f.clk.now
			req := &authenticationv1.TokenRequest{Spec: tc.spec}
			req.UID = "uid-1"
			if tc.uid != "" {
				req.UID = "other"
			}
			out, warnings, err := r.Create(context.Background(), "team-a", "default", req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(warnings, "|"); got != tc.wantWarning {
				t.Errorf("warnings %q, want %q", got, tc.wantWarning)
			}
			claims := payload(t, out.Status.Token)
			if got := time.Duration(claims["exp"].(float64)-claims["iat"].(float64)) * time.Second; got != tc.wantLifetime {
				t.Errorf("lifetime %v, want %v", got, tc.wantLifetime)
			}
			if aud := claims["aud"].([]any); len(aud) != 1 || aud[0] != tc.wantAud {
				t.Errorf("aud %v", aud)
			}
			if out.Name != "default" || out.Namespace != "team-a" || out.UID != "uid-1" || out.Status.ExpirationTimestamp.IsZero() {
				t.Errorf("answer %+v", out.ObjectMeta)
			}
			if tc.check != nil {
				tc.check(t, claims)
			}
		})
	}
}

func payload(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
