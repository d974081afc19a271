package storage

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestContinueTokenRoundTrip(t *testing.T) {
	for _, c := range []struct {
		start    string
		revision int64
	}{{"a\x00", 12}, {"ns/name\x00", ContinueLatest}, {"ü/ñ\x00", 1 << 40}} {
		token := EncodeContinue("pods/", ContinueToken{Revision: c.revision, Start: c.start})
		if strings.ContainsAny(token, "+/=") {
			t.Errorf("token %q is not URL-safe, unpadded base64", token)
		}
		got, err := DecodeContinue(token, "pods/")
		if err != nil || got.Start != c.start || got.Revision != c.revision {
			t.Errorf("decode(encode(%q, %d)) = %q, %d, %v", c.start, c.revision, got.Start, got.Revision, err)
		}
	}
}

// Tokens are opaque to clients, but kube's clients and tools have seen their shape; keep it.
func TestContinueTokenShape(t *testing.T) {
	token := EncodeContinue("pods/", ContinueToken{Revision: 7, Start: "b\x00"})
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":"meta.k8s.io/v1","rv":7,"start":"b\u0000","p":"` + prefixHash("pods/") + `"}`; string(data) != want {
		t.Errorf("token JSON %s, want %s", data, want)
	}
}

// The watch cache's mark survives the trip, also on a token that does not fit the list, so that the
// cache knows the token was its own.
func TestContinueTokenSource(t *testing.T) {
	token := EncodeContinue("pods/", ContinueToken{Revision: 7, Start: "b\x00", Source: "watchcache"})
	if got, err := DecodeContinue(token, "pods/"); err != nil || got.Source != "watchcache" {
		t.Errorf("decode = %+v, %v; want source watchcache", got, err)
	}
	got, err := DecodeContinue(token, "secrets/")
	if !IsInvalidContinue(err) || got.Source != "watchcache" {
		t.Errorf("decode for another list = %+v, %v; want InvalidContinue with source watchcache", got, err)
	}
}

// A token that does not fit gets kube's words (checked against kube-apiserver v1.37.2), which the
// handlers pass on after kube's "invalid continue token: ".
func TestDecodeContinueErrors(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	p := `,"p":"` + prefixHash("pods/") + `"`
	for _, tc := range []struct{ name, token, want string }{
		{"not base64", "a", "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"},
		{"not JSON", "not-a-token", `invalid continue token: continue key is not valid: invalid character '\u009e' looking for beginning of value`},
		{"not an object", b64(`[1]`), "invalid continue token: continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken"},
		{"revision not a number", b64(`{"v":"meta.k8s.io/v1","rv":"x","start":"a"}`), "invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"},
		{"unknown version", b64(`{"v":"x","rv":5,"start":"a"}`), "invalid continue token: continue key is not valid: server does not recognize this encoded version x"},
		{"no revision", b64(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"no start", b64(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`), "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{"start out of the list", b64(`{"v":"meta.k8s.io/v1","rv":5,"start":"../a"` + p + `}`), "invalid continue token: continue key is not valid: ../a"},
		{"another list", b64(`{"v":"meta.k8s.io/v1","rv":5,"start":"a"}`), "invalid continue token: continue key is not valid: it was issued for a different list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeContinue(tc.token, "pods/")
			if !IsInvalidContinue(err) || err.Error() != tc.want {
				t.Errorf("DecodeContinue = %v\nwant InvalidContinue %s", err, tc.want)
			}
		})
	}
	// kube lists from the latest revision for any negative one.
	if got, err := DecodeContinue(b64(`{"v":"meta.k8s.io/v1","rv":-5,"start":"a"`+p+`}`), "pods/"); err != nil || got.Revision != ContinueLatest {
		t.Errorf("a token of revision -5 = %+v, %v; want the latest revision", got, err)
	}
}
