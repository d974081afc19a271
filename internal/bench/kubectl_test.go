package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckKubectlTable(t *testing.T) {
	names := []string{"list-00000", "list-00001", "list-00002"}
	tests := []struct {
		name    string
		out     string
		wantErr string
	}{
		{name: "the table", out: "NAME         DATA   AGE\nlist-00000   3      5s\nlist-00001   3      5s\nlist-00002   3      4s\n"},
		{name: "in another order", out: "NAME DATA AGE\nlist-00002 3 4s\nlist-00000 3 5s\nlist-00001 3 5s\n"},
		{name: "nothing (kubectl's No resources found goes to stderr)", out: "", wantErr: `no NAME header but ""`},
		{name: "JSON instead of a table", out: `{"kind":"ConfigMapList"}`, wantErr: "no NAME header"},
		{name: "a row missing", out: "NAME DATA AGE\nlist-00000 3 5s\nlist-00001 3 5s\n", wantErr: "2 rows, want one per each of the 3 seeded objects"},
		{name: "a row too many", out: "NAME DATA AGE\nlist-00000 3 5s\nlist-00001 3 5s\nlist-00002 3 5s\nlist-00003 3 5s\n", wantErr: "4 rows"},
		{name: "a stranger", out: "NAME DATA AGE\nlist-00000 3 5s\nother 3 5s\nlist-00002 3 5s\n", wantErr: `row 2 names "other", no seeded object`},
		{name: "a row twice", out: "NAME DATA AGE\nlist-00000 3 5s\nlist-00000 3 5s\nlist-00002 3 5s\n", wantErr: `row 2 names "list-00000" a second time`},
		{name: "an empty row", out: "NAME DATA AGE\nlist-00000 3 5s\n\nlist-00002 3 5s\n", wantErr: "row 2 is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKubectlTable([]byte(tt.out), names)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseKubectlVersion(t *testing.T) {
	tests := []struct{ out, want string }{
		{"Client Version: v1.32.4\nKustomize Version: v5.5.0\n", "v1.32.4"},
		{"Client Version: v1.33.0-dispatcher\n", "v1.33.0-dispatcher"},
		{"kubectl 1.2\n", "kubectl 1.2"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := parseKubectlVersion([]byte(tt.out)); got != tt.want {
			t.Errorf("parseKubectlVersion(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestKubectlEnv(t *testing.T) {
	got := kubectlEnv([]string{"PATH=/bin", "KUBECONFIG=/home/me/.kube/config", "APICTL_SECURE_PORT=1", "HOME=/home/me"}, "/run/none")
	want := []string{"PATH=/bin", "HOME=/home/me", "KUBECONFIG=/run/none"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNewTiming(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	got := newTiming([]time.Duration{ms(30), ms(10), ms(50), ms(20), ms(40)})
	if got.Median != ms(30) || got.Min != ms(10) || got.Max != ms(50) || len(got.Runs) != 5 {
		t.Errorf("got %+v", got)
	}
	if got := newTiming(nil); got.Median != 0 || got.Runs != nil {
		t.Errorf("no runs: %+v", got)
	}
}

// fakeKubectl writes a shell script that answers as kubectl does: `version --client` prints a version,
// `get` runs getScript. Every call appends its arguments and KUBECONFIG to the returned log file.
func fakeKubectl(t *testing.T, getScript string) (binary, log string) {
	t.Helper()
	sh := shell(t)
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	script := "#!" + sh + "\n" +
		`echo "$* KUBECONFIG=$KUBECONFIG" >> '` + log + "'\n" +
		`case "$1" in` + "\n" +
		`version) echo "Client Version: v1.99.0-fake"; echo "Kustomize Version: v5";;` + "\n" +
		`get) ` + getScript + `;;` + "\n" +
		`*) echo "unknown command $1" >&2; exit 2;;` + "\n" +
		"esac\n"
	binary = filepath.Join(dir, "kubectl")
	if err := os.WriteFile(binary, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return binary, log
}

const threeRows = `printf 'NAME DATA AGE\nlist-00000 3 1s\nlist-00001 3 1s\nlist-00002 3 1s\n'`

func TestMeasureKubectl(t *testing.T) {
	tests := []struct {
		name      string
		getScript string
		wantGets  int
		wantFails int
		wantErr   string
	}{
		{name: "the right table every time", getScript: threeRows, wantGets: 2},
		{name: "a wrong table is a failure", getScript: `printf 'NAME DATA AGE\nlist-00000 3 1s\n'`, wantFails: 6,
			wantErr: "kubectl get configmaps -n bench-list --cache-dir "},
		{name: "an error is a failure", getScript: `echo 'error: the server could not find the requested resource' >&2; exit 1`, wantFails: 6,
			wantErr: "exit status 1: error: the server could not find the requested resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binary, log := fakeKubectl(t, tt.getScript)
			dir := filepath.Join(t.TempDir(), "kubectl")
			s := &server{dataDir: t.TempDir(), insecureURL: "http://127.0.0.1:1"}
			cfg := Config{Kubectl: binary, KubectlRuns: 2, ListObjects: 3}
			k, err := measureKubectl(context.Background(), cfg, s, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if k.Version != "v1.99.0-fake" || k.Objects != 3 || k.Warmups != 1 || k.Runs != 2 || k.Target != KubectlTarget || k.Invocation != kubectlInvocation {
				t.Errorf("got %+v", k)
			}
			// The warm-up is not recorded.
			if len(k.Client.Runs) != 2 || len(k.Get.Runs) != tt.wantGets || len(k.GetTLS.Runs) != tt.wantGets || k.Failed != tt.wantFails {
				t.Errorf("%d version runs, %d+%d get runs, %d failed; want 2, %d+%d, %d",
					len(k.Client.Runs), len(k.Get.Runs), len(k.GetTLS.Runs), k.Failed, tt.wantGets, tt.wantGets, tt.wantFails)
			}
			if tt.wantErr != "" && !strings.Contains(k.FirstError, tt.wantErr) {
				t.Errorf("first error %q, want %q", k.FirstError, tt.wantErr)
			}
			calls, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			// Three rounds of version, get over the insecure port without a kubeconfig, and get
			// with the admin kubeconfig; the cache in dir.
			noKubeconfig := " KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig")
			get := "get configmaps -n bench-list --cache-dir " + filepath.Join(dir, "cache")
			round := "version --client" + noKubeconfig + "\n" +
				get + " -s http://127.0.0.1:1" + noKubeconfig + "\n" +
				get + " KUBECONFIG=" + filepath.Join(s.dataDir, "pki", "admin.kubeconfig") + "\n"
			if want := strings.Repeat(round, 3); string(calls) != want {
				t.Errorf("calls:\n%s\nwant:\n%s", calls, want)
			}
		})
	}
}

func TestMeasureKubectlSkipsWithoutKubectl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s := &server{dataDir: t.TempDir(), insecureURL: "http://127.0.0.1:1"}
	k, err := measureKubectl(context.Background(), Config{KubectlRuns: 5, ListObjects: 1000}, s, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if k.Skipped != "kubectl is not on PATH" || len(k.Get.Runs) != 0 || k.Failed != 0 {
		t.Errorf("got %+v, want a skipped measurement", k)
	}
}

func TestMeasureKubectlEndsWithTheContext(t *testing.T) {
	binary, _ := fakeKubectl(t, threeRows)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &server{dataDir: t.TempDir(), insecureURL: "http://127.0.0.1:1"}
	_, err := measureKubectl(ctx, Config{Kubectl: binary, KubectlRuns: 2, ListObjects: 3}, s, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "measuring kubectl: context canceled") {
		t.Errorf("error %v, want the context's", err)
	}
}
