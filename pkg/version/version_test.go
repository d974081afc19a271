package version

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{
			Main: debug.Module{Version: "v0.3.1-0.20261101-abcdef+dirty"},
			Deps: []*debug.Module{{Path: "k8s.io/api", Version: "v0.99.0"}, {Path: "k8s.io/apimachinery", Version: "v0.38.1"}},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abcdef0"},
				{Key: "vcs.time", Value: "2026-11-01T00:00:00Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, true
	}
	workTree := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Deps: []*debug.Module{{Path: "k8s.io/apimachinery", Version: "v0.37.2"}}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name                          string
		ver, commit, tree, date       string
		read                          func() (*debug.BuildInfo, bool)
		wantVer, wantCommit, wantTree string
		wantMinor, wantMinCompat      string
		wantBuildDt, wantApictl       string
	}{
		{name: "release: ldflags win", ver: "v1.4.2", commit: "123", tree: "clean", date: "2026-01-01", read: stamped,
			wantVer: "v1.38.1+apictl.1.4.2", wantCommit: "123", wantTree: "clean", wantMinor: "38", wantMinCompat: "37",
			wantBuildDt: "2026-01-01", wantApictl: "1.4.2"},
		{name: "go install: module version", read: stamped,
			wantVer: "v1.38.1+apictl.0.3.1-0.20261101-abcdef.dirty", wantCommit: "abcdef0", wantTree: "dirty",
			wantMinor: "38", wantMinCompat: "37", wantBuildDt: "2026-11-01T00:00:00Z", wantApictl: "0.3.1-0.20261101-abcdef.dirty"},
		{name: "go run in a work tree", read: workTree, wantVer: "v1.37.2+apictl.devel", wantMinor: "37", wantMinCompat: "36",
			wantApictl: "devel"},
		{name: "nothing known", read: none, wantVer: fallbackKubernetes + "+apictl.devel", wantMinor: "37", wantMinCompat: "36",
			wantApictl: "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.ver, tt.commit, tt.tree, tt.date, tt.read)
			if got.GitVersion != tt.wantVer || got.GitCommit != tt.wantCommit || got.GitTreeState != tt.wantTree ||
				got.Major != "1" || got.Minor != tt.wantMinor || got.BuildDate != tt.wantBuildDt ||
				got.EmulationMajor != "1" || got.EmulationMinor != tt.wantMinor ||
				got.MinCompatibilityMajor != "1" || got.MinCompatibilityMinor != tt.wantMinCompat {
				t.Errorf("resolve() = %+v", got)
			}
			if got.Apictl() != tt.wantApictl {
				t.Errorf("Apictl() = %q, want %q", got.Apictl(), tt.wantApictl)
			}
			if got.GoVersion == "" || got.Platform == "" || got.Compiler == "" {
				t.Errorf("runtime fields missing: %+v", got)
			}
		})
	}
}

// TestFallbackMatchesGoMod keeps the version used without module data equal to the one the k8s.io
// modules in go.mod name, and checks that a test binary finds it in its own build information.
func TestFallbackMatchesGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/apimachinery v0\.(\d+)\.(\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require k8s.io/apimachinery v0.X.Y")
	}
	want := "v1." + string(m[1]) + "." + string(m[2])
	if fallbackKubernetes != want {
		t.Errorf("fallbackKubernetes = %s, go.mod's k8s.io modules are Kubernetes %s", fallbackKubernetes, want)
	}
	if got := Get().Kubernetes(); got != want {
		t.Errorf("Get().Kubernetes() = %s, want %s", got, want)
	}
}
