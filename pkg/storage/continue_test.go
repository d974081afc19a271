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
