package storage

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeContinue reads arbitrary continue tokens, as clients send them back. It must never
// panic; every refusal is an InvalidContinue StorageError; and a token it accepts encodes again
// to a token that decodes to the same position.
func FuzzDecodeContinue(f *testing.F) {
	for _, tc := range []struct{ token, prefix string }{
		{EncodeContinue("pods/", ContinueToken{Revision: 12, Start: "a\x00"}), "pods/"},
		{EncodeContinue("pods/", ContinueToken{Revision: ContinueLatest, Start: "ns/name\x00", Source: "cache"}), "pods/"},
		{EncodeContinue("pods/", ContinueToken{Revision: 7, Start: "b\x00"}), "configmaps/"},
		{"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIsInN0YXJ0IjoiYVx1MDAwMCJ9", "pods/"}, // kube's own shape, without p
		{"not base64!", "pods/"},
		{"e30", "pods/"}, // {}
		{"", ""},
	} {
		f.Add(tc.token, tc.prefix)
	}
	f.Fuzz(func(t *testing.T, token, prefix string) {
		if len(token)+len(prefix) > 64<<10 {
			return
		}
		got, err := DecodeContinue(token, prefix)
		if err != nil {
			var se *StorageError
			if !errors.As(err, &se) || se.Code != InvalidContinue {
				t.Fatalf("DecodeContinue(%q) failed with %v (%T), want an InvalidContinue StorageError", token, err, err)
			}
			return
		}
		if got.Start == "" || got.Revision == 0 || got.Revision < ContinueLatest {
			t.Fatalf("DecodeContinue(%q) accepted %+v", token, got)
		}
		again, err := DecodeContinue(EncodeContinue(prefix, got), prefix)
		if err != nil || again != got {
			t.Fatalf("the accepted token %q (%+v) encodes again to %+v, %v", token, got, again, err)
		}
	})
}

// FuzzContinueRoundTrip encodes arbitrary list positions: a valid position (a revision or
// ContinueLatest, a start key; keys are UTF-8, which JSON carries unchanged) decodes to itself for
// the same list and is refused by another list.
func FuzzContinueRoundTrip(f *testing.F) {
	f.Add("pods/", int64(12), "a\x00", "")
	f.Add("/registry/configmaps/default/", int64(ContinueLatest), "cm-1\x00", "cache")
	f.Add("", int64(1<<62), "ü/ñ\x00", "x")
	f.Fuzz(func(t *testing.T, prefix string, revision int64, start, source string) {
		if len(prefix)+len(start)+len(source) > 64<<10 {
			return
		}
		pos := ContinueToken{Revision: revision, Start: start, Source: source}
		token := EncodeContinue(prefix, pos)
		got, err := DecodeContinue(token, prefix)
		valid := revision != 0 && start != "" && cleanStart(start)
		if !valid {
			if err == nil {
				t.Fatalf("the position %+v is not valid but its token decodes to %+v", pos, got)
			}
			return
		}
		if !utf8.ValidString(start) || !utf8.ValidString(source) {
			return
		}
		want := pos
		want.Revision = max(revision, ContinueLatest) // any negative revision means the latest, as in kube
		if err != nil || got != want {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", pos, got, err)
		}
		if _, err := DecodeContinue(token, prefix+"x/"); err == nil {
			t.Fatalf("the token of %q (%+v) is accepted by the list of %q", prefix, pos, prefix+"x/")
		}
	})
}
