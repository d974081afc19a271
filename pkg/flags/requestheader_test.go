package flags

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/serve"
)

func TestValidateRequestHeader(t *testing.T) {
	dir := t.TempDir()
	caFile, _ := writePair(t, dir, false)
	otherCA, _ := writePair(t, t.TempDir(), false)
	bundle := filepath.Join(dir, "bundle.crt")
	other, _ := os.ReadFile(otherCA)
	mine, _ := os.ReadFile(caFile)
	writeFile(t, bundle, string(other)+string(mine))
	notCA := filepath.Join(dir, "not-ca.pem")
	writeFile(t, notCA, "hello")

	tests := []struct {
		name   string
		modify func(o *ServerOptions)
		// want holds "flag: the whole problem, as Error prints it" for every expected problem, in order.
		want []string
	}{
		{name: "kubeadm's settings", modify: func(o *ServerOptions) {
			rh := o.Authentication.RequestHeader
			rh.ClientCAFile, rh.AllowedNames = caFile, []string{"front-proxy-client"}
			rh.UsernameHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes = []string{"X-Remote-User"}, []string{"X-Remote-Group"}, []string{"X-Remote-Extra-"}
			rh.UIDHeaders = []string{"x-remote-uid"}
		}},
		{name: "CA file missing", modify: func(o *ServerOptions) {
			o.Authentication.RequestHeader.ClientCAFile = "/nonexistent/front-proxy-ca.crt"
		},
			want: []string{"requestheader-client-ca-file: --requestheader-client-ca-file /nonexistent/front-proxy-ca.crt does not exist: check the path"}},
		{name: "CA file without certificates", modify: func(o *ServerOptions) { o.Authentication.RequestHeader.ClientCAFile = notCA },
			want: []string{"requestheader-client-ca-file: --requestheader-client-ca-file " + notCA + " holds no PEM certificate: give a file with one or more -----BEGIN CERTIFICATE----- blocks"}},
		{name: "empty values", modify: func(o *ServerOptions) {
			rh := o.Authentication.RequestHeader
			rh.UsernameHeaders, rh.GroupHeaders, rh.AllowedNames = []string{"X-Remote-User", " "}, []string{""}, []string{"a", ""}
		}, want: []string{
			"requestheader-username-headers: --requestheader-username-headers \"X-Remote-User, \" has an empty value: remove the stray comma or blank entry",
			"requestheader-group-headers: --requestheader-group-headers has an empty value: remove the stray comma or blank entry",
			"requestheader-allowed-names: --requestheader-allowed-names a, has an empty value: remove the stray comma or blank entry",
		}},
		{name: "uid headers without the standard one", modify: func(o *ServerOptions) { o.Authentication.RequestHeader.UIDHeaders = []string{"X-Uid"} },
			want: []string{"requestheader-uid-headers: --requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work"}},
		{name: "uid headers with the feature off", modify: func(o *ServerOptions) {
			o.Authentication.RequestHeader.UIDHeaders = []string{"X-Remote-Uid"}
			o.Generic.FeatureGates = map[string]string{"RemoteRequestHeaderUID": "false"}
		}, want: []string{`requestheader-uid-headers: --requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled`}},
		{name: "overlapping bundles need allowed names", modify: func(o *ServerOptions) {
			o.Authentication.ClientCAFile = bundle
			o.Authentication.RequestHeader.ClientCAFile = caFile
		}, want: []string{"requestheader-client-ca-file: --requestheader-client-ca-file and --client-ca-file contain overlapping certificates; " +
			"--requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users"}},
		{name: "overlapping bundles with allowed names", modify: func(o *ServerOptions) {
			o.Authentication.ClientCAFile = bundle
			o.Authentication.RequestHeader.ClientCAFile = caFile
			o.Authentication.RequestHeader.AllowedNames = []string{"front-proxy-client"}
		}},
		{name: "separate bundles", modify: func(o *ServerOptions) {
			o.Authentication.ClientCAFile = otherCA
			o.Authentication.RequestHeader.ClientCAFile = caFile
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewServerOptions()
			o.Generic.DataDir = t.TempDir()
			tt.modify(o)
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range Problems(SectionGeneric, o.Validate()) {
				if p.Section != SectionAuthentication {
					t.Errorf("problem in section %q: %v", p.Section, p)
				}
				got = append(got, p.Flag+": "+p.Error())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestRequestHeaderWarnings(t *testing.T) {
	o := NewServerOptions()
	o.Generic.DataDir = t.TempDir()
	rh := o.Authentication.RequestHeader
	rh.UsernameHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes = []string{"X-User"}, []string{"x-remote-group"}, []string{"X-Extra-"}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range o.Warnings() {
		got = append(got, w.Error())
	}
	want := []string{
		"--requestheader-client-ca-file is not set, so front-proxy authentication is off and the other --requestheader-* flags do nothing: " +
			"give --requestheader-client-ca-file " + filepath.Join(o.SecureServing.CertDir, "front-proxy-ca.crt") + " to trust the bootstrapped front-proxy CA",
		// kube's, word for word
		"--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work",
		"--requestheader-extra-headers-prefix is set without specifying the standard X-Remote-Extra- header prefix - API aggregation will not work",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestRequestHeaderBootstrapDefaults checks which settings serve uses: kubeadm's, with the bootstrap
// front-proxy CA, when apictl makes its own PKI and no --requestheader-* flag is given; else exactly
// the user's, which may mean none.
func TestRequestHeaderBootstrapDefaults(t *testing.T) {
	caFile, keyFile := writePair(t, t.TempDir(), false)
	tests := []struct {
		name   string
		modify func(o *ServerOptions)
		wantCA func(certDir string) string
		names  []string
	}{
		{name: "bootstrap", modify: func(*ServerOptions) {},
			wantCA: func(d string) string { return certs.CertPath(d, certs.NameFrontProxyCA) }, names: []string{"front-proxy-client"}},
		{name: "user's serving pair", modify: func(o *ServerOptions) { o.SecureServing.CertFile, o.SecureServing.KeyFile = caFile, keyFile },
			wantCA: func(string) string { return "" }},
		{name: "a requestheader flag given", modify: func(o *ServerOptions) { o.Authentication.RequestHeader.UsernameHeaders = []string{"X-Remote-User"} },
			wantCA: func(string) string { return "" }},
		{name: "the user's CA", modify: func(o *ServerOptions) { o.Authentication.RequestHeader.ClientCAFile = caFile },
			wantCA: func(string) string { return caFile }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewServerOptions()
			o.Generic.DataDir = t.TempDir()
			tt.modify(o)
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			e := o.Authentication.RequestHeader.Effective()
			if want := tt.wantCA(o.SecureServing.CertDir); e.ClientCAFile != want || !slices.Equal(e.AllowedNames, tt.names) {
				t.Fatalf("CA %q, allowed names %v; want %q, %v", e.ClientCAFile, e.AllowedNames, want, tt.names)
			}
			if tt.names != nil && (!slices.Equal(e.UsernameHeaders, []string{"X-Remote-User"}) || !slices.Equal(e.GroupHeaders, []string{"X-Remote-Group"}) ||
				!slices.Equal(e.ExtraHeaderPrefixes, []string{"X-Remote-Extra-"}) || len(e.UIDHeaders) != 0) {
				t.Errorf("headers %+v, want kubeadm's", e)
			}
		})
	}
}

// TestRequestHeaderApplyTo checks that the authenticator lands on the secure port with its CA bundle.
func TestRequestHeaderApplyTo(t *testing.T) {
	caFile, _ := writePair(t, t.TempDir(), false)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := NewRequestHeaderOptions()
	cfg := &serve.Config{Logger: logger, SecureServing: &serve.SecureServingInfo{}}
	if a, err := o.authenticator(context.Background(), cfg); a != nil || err != nil || cfg.SecureServing.RequestHeaderCA != nil {
		t.Fatalf("without a CA: authenticator %v, error %v", a, err)
	}
	o.ClientCAFile = "/nonexistent/ca.crt"
	if _, err := o.authenticator(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--requestheader-client-ca-file") {
		t.Fatalf("missing CA: error %v", err)
	}
	o.ClientCAFile = caFile
	a, err := o.authenticator(context.Background(), cfg)
	if a == nil || err != nil || cfg.SecureServing.RequestHeaderCA == nil || cfg.SecureServing.RequestHeaderCA.Pool() == nil {
		t.Fatalf("with a CA: authenticator %v, error %v, bundle %v", a, err, cfg.SecureServing.RequestHeaderCA)
	}
}
