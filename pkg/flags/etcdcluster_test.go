package flags

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// testJoinToken has a join token's form; only its form is checked here.
var testJoinToken = "apictl1." + strings.Repeat("0f", 32) + ".c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"

// badJoinToken looks secret enough that it must never be echoed.
const badJoinToken = "apictl1.not-hex.TOPSECRET-do-not-print-0123456789"

func TestValidateCluster(t *testing.T) {
	type want struct{ flag, value, message string }
	tests := []struct {
		name   string
		modify func(o *EtcdOptions)
		want   []want
	}{
		{name: "defaults", modify: func(*EtcdOptions) {}},
		{name: "first server", modify: func(o *EtcdOptions) { o.Cluster.ClusterInit = true }},
		{name: "joiner", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", testJoinToken
		}},
		{name: "joiner with a trailing slash and fixed ports", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443/", testJoinToken
			o.Cluster.PeerPort, o.Cluster.ClientPort = 65535, 1
		}},
		{name: "reset", modify: func(o *EtcdOptions) { o.Cluster.ClusterReset = true }},
		{name: "cluster-init with etcd-servers", modify: func(o *EtcdOptions) {
			o.Servers = []string{"https://10.0.0.1:2379"}
			o.Cluster.ClusterInit = true
		}, want: []want{{"cluster-init", "", "applies to the embedded etcd only"}}},
		{name: "join with etcd-servers", modify: func(o *EtcdOptions) {
			o.Servers = []string{"https://10.0.0.1:2379"}
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", testJoinToken
		}, want: []want{{"join", "", "applies to the embedded etcd only"}}},
		{name: "cluster-reset with etcd-servers", modify: func(o *EtcdOptions) {
			o.Servers = []string{"https://10.0.0.1:2379"}
			o.Cluster.ClusterReset = true
		}, want: []want{{"cluster-reset", "", "applies to the embedded etcd only"}}},
		{name: "cluster-init with join", modify: func(o *EtcdOptions) {
			o.Cluster.ClusterInit = true
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", testJoinToken
		}, want: []want{{"join", "https://10.0.0.1:6443", "cannot be given with --cluster-init"}}},
		{name: "cluster-reset with join", modify: func(o *EtcdOptions) {
			o.Cluster.ClusterReset = true
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", testJoinToken
		}, want: []want{{"cluster-reset", "", "cannot be given with --join"}}},
		{name: "join without join-token", modify: func(o *EtcdOptions) {
			o.Cluster.Join = "https://10.0.0.1:6443"
		}, want: []want{{"join-token", "", "is needed with --join"}}},
		{name: "join over http", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "http://10.0.0.1:6443", testJoinToken
		}, want: []want{{"join", "http://10.0.0.1:6443", "must be https://HOST:PORT"}}},
		{name: "join with a path", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443/apis", testJoinToken
		}, want: []want{{"join", "https://10.0.0.1:6443/apis", "must be https://HOST:PORT"}}},
		{name: "join without a scheme", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "10.0.0.1:6443", testJoinToken
		}, want: []want{{"join", "10.0.0.1:6443", "must be https://HOST:PORT"}}},
		{name: "join-token without join", modify: func(o *EtcdOptions) {
			o.Cluster.JoinToken = testJoinToken
		}, want: []want{{"join-token", "<redacted>", "is only used with --join"}}},
		{name: "malformed join-token", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", badJoinToken
		}, want: []want{{"join-token", "<redacted>", "CA hash is not 64 hex digits"}}},
		{name: "not a join-token", modify: func(o *EtcdOptions) {
			o.Cluster.Join, o.Cluster.JoinToken = "https://10.0.0.1:6443", "TOPSECRET-do-not-print"
		}, want: []want{{"join-token", "<redacted>", "not an apictl join token"}}},
		{name: "peer port 0", modify: func(o *EtcdOptions) { o.Cluster.PeerPort = 0 },
			want: []want{{"etcd-peer-port", "0", "must be between 1 and 65535"}}},
		{name: "peer port 70000", modify: func(o *EtcdOptions) { o.Cluster.PeerPort = 70000 },
			want: []want{{"etcd-peer-port", "70000", "must be between 1 and 65535"}}},
		{name: "client port -1", modify: func(o *EtcdOptions) { o.Cluster.ClientPort = -1 },
			want: []want{{"etcd-client-port", "-1", "must be between 0 and 65535"}}},
		{name: "client port 65536", modify: func(o *EtcdOptions) { o.Cluster.ClientPort = 65536 },
			want: []want{{"etcd-client-port", "65536", "must be between 0 and 65535"}}},
		{name: "client port is the peer port", modify: func(o *EtcdOptions) { o.Cluster.ClientPort = DefaultEtcdPeerPort },
			want: []want{{"etcd-client-port", "2380", "must differ from --etcd-peer-port"}}},
		{name: "everything at once", modify: func(o *EtcdOptions) {
			o.Servers = []string{"https://10.0.0.1:2379"}
			o.Cluster = EmbeddedClusterOptions{
				ClusterInit: true, ClusterReset: true, Join: "http://x", JoinToken: badJoinToken,
				PeerPort: 0, ClientPort: -1,
			}
		}, want: []want{
			{"cluster-init", "", "applies to the embedded etcd only"},
			{"join", "", "applies to the embedded etcd only"},
			{"cluster-reset", "", "applies to the embedded etcd only"},
			{"join", "http://x", "cannot be given with --cluster-init"},
			{"cluster-reset", "", "cannot be given with --join"},
			{"join", "http://x", "must be https://HOST:PORT"},
			{"join-token", "<redacted>", "CA hash is not 64 hex digits"},
			{"etcd-peer-port", "0", "must be between 1 and 65535"},
			{"etcd-client-port", "-1", "must be between 0 and 65535"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewEtcdOptions()
			tt.modify(o)
			problems := Problems(SectionEtcd, o.Validate())
			var got []want
			for _, p := range problems {
				got = append(got, want{p.Flag, p.Value, p.Message})
				if p.Section != SectionEtcd {
					t.Errorf("%v: section %q, want %q", p, p.Section, SectionEtcd)
				}
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), "TOPSECRET") || strings.Contains(p.Error(), "TOPSECRET") ||
					(o.Cluster.JoinToken != "" && strings.Contains(p.Error(), o.Cluster.JoinToken)) {
					t.Errorf("a problem shows the join token: %s", b)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant:\n%s", describe(got), describe(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.flag != w.flag || g.value != w.value || !strings.Contains(g.message, w.message) {
					t.Errorf("problem %d = --%s %q %q, want --%s %q containing %q", i, g.flag, g.value, g.message, w.flag, w.value, w.message)
				}
			}
		})
	}
}

func describe[T any](items []T) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "  %+v\n", it)
	}
	return b.String()
}

// `apictl flags show` must never print the join token, however it was given.
func TestSettingsRedactJoinToken(t *testing.T) {
	tests := []struct {
		name       string
		env        string
		args       []string
		wantValue  string
		wantSource Source
	}{
		{name: "unset", wantValue: "", wantSource: SourceDefault},
		{name: "flag", args: []string{"--join", "https://10.0.0.1:6443", "--join-token", testJoinToken}, wantValue: "<redacted>", wantSource: SourceFlag},
		{name: "environment", env: testJoinToken, wantValue: "<redacted>", wantSource: SourceEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv(EnvPrefix+"_JOIN_TOKEN", tt.env)
			}
			o, fss, fs := parse(t, tt.args...)
			sources, problems, _ := Merge(fss, fs)
			if len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			if tt.wantValue != "" && o.Etcd.Cluster.JoinToken != testJoinToken {
				t.Fatalf("JoinToken = %q: the flag did not reach the options", o.Etcd.Cluster.JoinToken)
			}
			found := 0
			for _, s := range Settings(fss, sources) {
				if strings.Contains(s.Value, testJoinToken) || strings.Contains(s.Value, "c2VjcmV0") {
					t.Errorf("--%s shows the token: %q", s.Flag, s.Value)
				}
				switch s.Flag {
				case "join-token":
					found++
					if s.Value != tt.wantValue || s.Source != tt.wantSource || s.Section != SectionEtcd {
						t.Errorf("join-token = %q from %s in %q, want %q from %s in %q", s.Value, s.Source, s.Section, tt.wantValue, tt.wantSource, SectionEtcd)
					}
				case "join":
					// Only secrets are hidden.
					if len(tt.args) > 0 && s.Value != "https://10.0.0.1:6443" {
						t.Errorf("join = %q, want it shown", s.Value)
					}
				}
			}
			if found != 1 {
				t.Errorf("join-token listed %d times, want once", found)
			}
		})
	}
}

// Evaluate, which `flags validate` and `serve` print, names a bad token without showing it.
func TestEvaluateHidesJoinToken(t *testing.T) {
	o, fss, fs := parse(t, "--join-token", badJoinToken)
	e := Evaluate(o, fss, fs)
	var found []string
	for _, p := range append(e.Errors, e.Warnings...) {
		if strings.Contains(p.Error(), "TOPSECRET") || strings.Contains(p.Value, "TOPSECRET") {
			t.Errorf("problem shows the token: %v", p)
		}
		if p.Flag == "join-token" {
			found = append(found, p.Error())
		}
	}
	want := []string{
		"--join-token <redacted> the join token's CA hash is not 64 hex digits: copy the whole token from the join-token file",
		"--join-token <redacted> is only used with --join",
	}
	if strings.Join(found, "\n") != strings.Join(want, "\n") {
		t.Errorf("join-token problems:\n%s\nwant:\n%s", strings.Join(found, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateClusterJoinWithoutPort(t *testing.T) {
	for _, u := range []string{"https://10.0.0.1", "https://:6443"} {
		o := NewEtcdOptions()
		o.Cluster.Join, o.Cluster.JoinToken = u, testJoinToken
		if errs := o.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "must be https://HOST:PORT") {
			t.Errorf("--join %s: problems %v, want one saying it must be https://HOST:PORT", u, errs)
		}
	}
}
