package flags

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// parse builds serve's flag set the way the commands do and parses args into it.
func parse(t *testing.T, args ...string) (*ServerOptions, *NamedFlagSets, *pflag.FlagSet) {
	t.Helper()
	o := NewServerOptions()
	fss := o.Flags()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, &fss, fs
}

func TestMergePrecedence(t *testing.T) {
	config := filepath.Join(t.TempDir(), "apictl.yaml")
	writeFile(t, config, "secure-port: 8443\ncors-allowed-origins:\n  - ^https://a$\n  - ^https://b$\nprofiling: false\n")
	tests := []struct {
		name       string
		env        string
		args       []string
		wantPort   int
		wantSource Source
	}{
		{name: "flag wins", env: "7443", args: []string{"--secure-port", "9443"}, wantPort: 9443, wantSource: SourceFlag},
		{name: "environment beats file", env: "7443", wantPort: 7443, wantSource: SourceEnv},
		{name: "file beats default", wantPort: 8443, wantSource: SourceFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("APICTL_SECURE_PORT", tt.env)
			o, fss, fs := parse(t, append([]string{"--config", config}, tt.args...)...)
			sources, problems, _ := Merge(fss, fs)
			if len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			if o.SecureServing.BindPort != tt.wantPort || sources["secure-port"] != tt.wantSource {
				t.Errorf("secure-port = %d from %s, want %d from %s", o.SecureServing.BindPort, sources["secure-port"], tt.wantPort, tt.wantSource)
			}
			if got := strings.Join(o.Generic.CORSAllowedOrigins, ","); got != "^https://a$,^https://b$" {
				t.Errorf("list from file = %q", got)
			}
			if o.Features.Profiling || sources["profiling"] != SourceFile {
				t.Errorf("profiling = %v from %s, want false from the file", o.Features.Profiling, sources["profiling"])
			}
			if o.InsecureServing.BindPort != 8080 || sources["insecure-port"] != SourceDefault {
				t.Errorf("default lost: insecure-port = %d from %s", o.InsecureServing.BindPort, sources["insecure-port"])
			}
		})
	}
}

func TestMergeConfigFromEnvironment(t *testing.T) {
	config := filepath.Join(t.TempDir(), "apictl.yaml")
	writeFile(t, config, "insecure-port: 0\n")
	t.Setenv("APICTL_CONFIG", config)
	o, fss, fs := parse(t)
	sources, problems, _ := Merge(fss, fs)
	if len(problems) != 0 || o.InsecureServing.BindPort != 0 || sources[ConfigFlag] != SourceEnv {
		t.Errorf("port %d, sources %v, problems %v", o.InsecureServing.BindPort, sources[ConfigFlag], problems)
	}
}

func TestMergeProblems(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		config string
		env    map[string]string
		want   []string
	}{
		{name: "typo with suggestion", config: "secure-prot: 8443\n",
			want: []string{`has an unknown key "secure-prot": did you mean "secure-port"?`}},
		{name: "unknown key without suggestion", config: "frobnicate: true\n",
			want: []string{`has an unknown key "frobnicate": keys are flag names`}},
		{name: "every unknown key", config: "etcd-server: x\ninsecure-prot: 1\n",
			want: []string{`"etcd-server": did you mean "etcd-servers"?`, `"insecure-prot": did you mean "insecure-port"?`}},
		{name: "bad value in file", config: "secure-port: many\n",
			want: []string{`from config file`, `must be an integer`}},
		{name: "bad value in environment", env: map[string]string{"APICTL_REQUEST_TIMEOUT": "soon"},
			want: []string{`from environment variable APICTL_REQUEST_TIMEOUT is invalid`}},
		{name: "map in file", config: "feature-gates:\n  WatchList: false\n",
			want: []string{`a map is not accepted here`}},
		{name: "config names config", config: "config: other.yaml\n",
			want: []string{`a config file cannot name another config file`}},
		{name: "not yaml", config: "secure-port: [\n",
			want: []string{`cannot be read as YAML`}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := []string{}
			if tt.config != "" {
				path := filepath.Join(dir, strings.Repeat("c", i+1)+".yaml")
				writeFile(t, path, tt.config)
				args = append(args, "--config", path)
			}
			_, fss, fs := parse(t, args...)
			_, problems, _ := Merge(fss, fs)
			var all []string
			for _, p := range problems {
				all = append(all, p.Error())
			}
			joined := strings.Join(all, "\n")
			for _, want := range tt.want {
				if !strings.Contains(joined, want) {
					t.Errorf("problems\n%s\nlack %q", joined, want)
				}
			}
			if len(problems) == 0 {
				t.Errorf("no problems reported")
			}
		})
	}
}

func TestUnknownEnvironmentWarns(t *testing.T) {
	t.Setenv("APICTL_SECURE_PROT", "1")
	_, fss, fs := parse(t)
	_, problems, warnings := Merge(fss, fs)
	if len(problems) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "did you mean APICTL_SECURE_PORT?") {
		t.Errorf("problems %v, warnings %v", problems, warnings)
	}
}
