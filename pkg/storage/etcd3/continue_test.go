package etcd3

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestContinueTokenRoundTrip(t *testing.T) {
	for _, c := range []struct {
		start    string
		revision int64
	}{{"a\x00", 12}, {"ns/name\x00", inconsistentRevision}, {"ü/ñ\x00", 1 << 40}} {
		token, err := encodeContinue("pods/", c.start, c.revision)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(token, "+/=") {
			t.Errorf("token %q is not URL-safe, unpadded base64", token)
		}
		start, revision, err := decodeContinue(token, "pods/")
		if err != nil || start != "pods/"+c.start || revision != c.revision {
			t.Errorf("decode(encode(%q, %d)) = %q, %d, %v", c.start, c.revision, start, revision, err)
		}
	}
}

// Tokens are opaque to clients, but kube's clients and tools have seen their shape; keep it.
func TestContinueTokenShape(t *testing.T) {
	token, _ := encodeContinue("pods/", "b\x00", 7)
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":"meta.k8s.io/v1","rv":7,"start":"b\u0000","p":"` + prefixHash("pods/") + `"}`; string(data) != want {
		t.Errorf("token JSON %s, want %s", data, want)
	}
}
