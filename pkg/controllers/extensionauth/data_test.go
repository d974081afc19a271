package extensionauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"reflect"
	"testing"
	"time"
)

// caPEM mints a self-signed CA certificate valid until notAfter, PEM-encoded.
func caPEM(t *testing.T, name string, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestData(t *testing.T) {
	now := time.Now()
	client, proxy := caPEM(t, "client", now.Add(time.Hour)), caPEM(t, "proxy", now.Add(time.Hour))
	full := Info{ClientCA: client, RequestHeaderCA: proxy, UsernameHeaders: []string{"X-Remote-User"},
		UIDHeaders: []string{"X-Remote-Uid"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}, AllowedNames: []string{"front-proxy-client"}}
	tests := []struct {
		name    string
		info    Info
		withUID bool
		want    map[string]string
	}{
		{name: "nothing trusted", want: map[string]string{}},
		{name: "client CA only", info: Info{ClientCA: client, UsernameHeaders: []string{"X-Remote-User"}},
			want: map[string]string{KeyClientCA: string(client)}},
		// The reference server's layout: no uid key when no UID header is configured.
		{name: "kubeadm's front proxy", info: Info{ClientCA: client, RequestHeaderCA: proxy, UsernameHeaders: []string{"X-Remote-User"},
			GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}, AllowedNames: []string{"front-proxy-client"}},
			withUID: true,
			want: map[string]string{KeyClientCA: string(client), KeyRequestHeaderClientCA: string(proxy),
				KeyRequestHeaderAllowed: `["front-proxy-client"]`, KeyRequestHeaderExtraPrefix: `["X-Remote-Extra-"]`,
				KeyRequestHeaderGroup: `["X-Remote-Group"]`, KeyRequestHeaderUsername: `["X-Remote-User"]`}},
		{name: "uid headers with the feature", info: full, withUID: true,
			want: map[string]string{KeyClientCA: string(client), KeyRequestHeaderClientCA: string(proxy),
				KeyRequestHeaderAllowed: `["front-proxy-client"]`, KeyRequestHeaderExtraPrefix: `["X-Remote-Extra-"]`,
				KeyRequestHeaderGroup: `["X-Remote-Group"]`, KeyRequestHeaderUsername: `["X-Remote-User"]`,
				KeyRequestHeaderUID: `["X-Remote-Uid"]`}},
		{name: "uid headers without the feature", info: full,
			want: map[string]string{KeyClientCA: string(client), KeyRequestHeaderClientCA: string(proxy),
				KeyRequestHeaderAllowed: `["front-proxy-client"]`, KeyRequestHeaderExtraPrefix: `["X-Remote-Extra-"]`,
				KeyRequestHeaderGroup: `["X-Remote-Group"]`, KeyRequestHeaderUsername: `["X-Remote-User"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Data publishes what Merge returns, whose lists are never nil: an empty list is [].
			merged, err := Merge(Info{}, tt.info, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Data(merged, tt.withUID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Data =\n%v\nwant\n%v", got, tt.want)
			}
			back, err := Parse(got, tt.withUID)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Data(back, tt.withUID)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("Parse does not round-trip: %v, %v", again, err)
			}
		})
	}
}

func TestEmptyListsAreArrays(t *testing.T) {
	merged, err := Merge(Info{}, Info{RequestHeaderCA: caPEM(t, "proxy", time.Now().Add(time.Hour))}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := Data(merged, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KeyRequestHeaderUsername, KeyRequestHeaderGroup, KeyRequestHeaderExtraPrefix, KeyRequestHeaderAllowed} {
		if data[k] != "[]" {
			t.Errorf("%s = %q, want []", k, data[k])
		}
	}
	if _, ok := data[KeyRequestHeaderUID]; ok {
		t.Errorf("%s published without UID headers", KeyRequestHeaderUID)
	}
}

// TestMerge: servers with different trust keep each other's: lists are unions in order, bundles
// hold each certificate once, and certificates expired more than five minutes ago are dropped.
func TestMerge(t *testing.T) {
	now := time.Now()
	a, b := caPEM(t, "a", now.Add(time.Hour)), caPEM(t, "b", now.Add(time.Hour))
	expired, graced := caPEM(t, "expired", now.Add(-6*time.Minute)), caPEM(t, "graced", now.Add(-4*time.Minute))
	existing := Info{ClientCA: append(append([]byte{}, a...), expired...), RequestHeaderCA: graced,
		UsernameHeaders: []string{"X-Remote-User", "X-Other"}, AllowedNames: []string{"one"}}
	required := Info{ClientCA: append(append([]byte{}, b...), a...), RequestHeaderCA: b,
		UsernameHeaders: []string{"X-Remote-User"}, AllowedNames: []string{"two", "one"}, GroupHeaders: []string{"X-Remote-Group"}}
	got, err := Merge(existing, required, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(a) + string(b); string(got.ClientCA) != want {
		t.Errorf("client CA = %s, want a then b", got.ClientCA)
	}
	if want := string(graced) + string(b); string(got.RequestHeaderCA) != want {
		t.Errorf("request-header CA = %s, want graced then b", got.RequestHeaderCA)
	}
	if want := []string{"X-Remote-User", "X-Other"}; !reflect.DeepEqual(got.UsernameHeaders, want) {
		t.Errorf("username headers = %v, want %v", got.UsernameHeaders, want)
	}
	if want := []string{"one", "two"}; !reflect.DeepEqual(got.AllowedNames, want) {
		t.Errorf("allowed names = %v, want %v", got.AllowedNames, want)
	}
	if want := []string{"X-Remote-Group"}; !reflect.DeepEqual(got.GroupHeaders, want) {
		t.Errorf("group headers = %v, want %v", got.GroupHeaders, want)
	}
	if _, err := Merge(Info{ClientCA: []byte("not pem")}, required, now); err == nil {
		t.Error("a broken published bundle merged without an error")
	}
	if _, err := Parse(map[string]string{KeyRequestHeaderGroup: "X-Remote-Group"}, true); err == nil {
		t.Error("a list that is not JSON parsed without an error")
	}
}
