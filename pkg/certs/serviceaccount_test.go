package certs

import (
	"bytes"
	"context"
	"crypto/rsa"
	"os"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
	"github.com/apictl/apictl/pkg/output"
)

func TestServiceAccountKeyPair(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// prepare runs on an initialized cert dir before EnsureServing runs again.
		prepare func(t *testing.T, dir string)
		wantErr string
		// wantPub is sa.pub's action on the second run.
		wantPub Action
	}{
		{name: "kept", prepare: func(*testing.T, string) {}, wantPub: ActionKept},
		{name: "missing public key is rewritten from the key", wantPub: ActionCreated,
			prepare: func(t *testing.T, dir string) { mustRemove(t, ServiceAccountPubPath(dir)) }},
		{name: "public key without its key", wantErr: "sa.pub exists without",
			prepare: func(t *testing.T, dir string) { mustRemove(t, ServiceAccountKeyPath(dir)) }},
		{name: "mismatch", wantErr: "(key mismatch)", prepare: func(t *testing.T, dir string) {
			pub, _ := encodePublicKey(testKey(7).Public())
			if err := os.WriteFile(ServiceAccountPubPath(dir), pub, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			initDir(t, dir, nil)
			before, err := os.ReadFile(ServiceAccountKeyPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, dir)
			spec := NewServingSpec(dir)
			spec.Hostname = "node1"
			r, err := EnsureServing(ctx, spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "tokens signed by the old key stop verifying") {
					t.Fatalf("err = %v, want %q and the rotation note", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := actions(t, r)["sa.pub"]; got != tc.wantPub {
				t.Errorf("sa.pub: %s, want %s", got, tc.wantPub)
			}
			after, _ := os.ReadFile(ServiceAccountKeyPath(dir))
			if !bytes.Equal(before, after) {
				t.Error("sa.key changed")
			}
		})
	}
}

func TestServiceAccountAlgorithm(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, func(s *ServingSpec) { s.KeyAlgorithm = Ed25519 })
	data, _ := os.ReadFile(ServiceAccountKeyPath(dir))
	key, err := parseKeyPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := key.(*rsa.PrivateKey); !ok || k.N.BitLen() != 2048 {
		t.Errorf("with --key-algorithm ed25519 the service-account key is %T, want RSA-2048 (kube cannot sign tokens with Ed25519)", key)
	}
}

func TestRenewServiceAccount(t *testing.T) {
	dir := t.TempDir()
	initDir(t, dir, nil)
	before := snapshot(t, dir)
	spec := NewRenewSpec(dir)
	spec.Names = []string{"sa"}
	r, err := Renew(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(t, r); len(got) != 2 || got["sa.key"] != ActionRenewed || got["sa.pub"] != ActionRenewed {
		t.Errorf("actions %v, want sa.key and sa.pub renewed", got)
	}
	if diff := sameFiles(before, snapshot(t, dir)); diff != "sa.key changed; sa.pub changed" {
		t.Errorf("changes: %q", diff)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "tokens signed by the old key stop verifying") ||
		!strings.Contains(r.Notes[0], "--service-account-key-file") {
		t.Errorf("notes %q", r.Notes)
	}
	if _, err := EnsureServing(context.Background(), NewServingSpec(dir)); err != nil {
		t.Errorf("the renewed pair does not satisfy init: %v", err)
	}
}

func TestListServiceAccount(t *testing.T) {
	dir := listFixture(t)
	key, _ := encodeKey(testKey(20))
	pub, _ := encodePublicKey(testKey(21).Public())
	if err := os.WriteFile(ServiceAccountKeyPath(dir), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ServiceAccountPubPath(dir), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := List(ListOptions{Dir: dir, Now: fixed, WarnWithin: DefaultWarnWithin})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteListing(&b, l, output.FormatTable, true); err != nil {
		t.Fatal(err)
	}
	b.WriteString("---\n")
	if err := WriteListingProblems(&b, l); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "list/serviceaccount.txt", strings.ReplaceAll(b.String(), dir, "<dir>"))
	if l.OK() {
		t.Error("a mismatched service-account pair leaves the listing ok")
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
