package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{
			Main: debug.Module{Version: "v0.3.1-0.20261101-abcdef"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abcdef0"},
				{Key: "vcs.time", Value: "2026-11-01T00:00:00Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name                              string
		ver, commit, tree, date           string
		read                              func() (*debug.BuildInfo, bool)
		wantVer, wantCommit, wantTree     string
		wantMajor, wantMinor, wantBuildDt string
	}{
		{name: "ldflags win", ver: "v1.4.2", commit: "123", tree: "clean", date: "2026-01-01", read: stamped,
			wantVer: "v1.4.2", wantCommit: "123", wantTree: "clean", wantMajor: "1", wantMinor: "4", wantBuildDt: "2026-01-01"},
		{name: "build info fallback", read: stamped,
			wantVer: "v0.3.1-0.20261101-abcdef", wantCommit: "abcdef0", wantTree: "dirty", wantMajor: "0", wantMinor: "3",
			wantBuildDt: "2026-11-01T00:00:00Z"},
		{name: "nothing known", read: none, wantVer: "v0.0.0-devel", wantMajor: "0", wantMinor: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.ver, tt.commit, tt.tree, tt.date, tt.read)
			if got.GitVersion != tt.wantVer || got.GitCommit != tt.wantCommit || got.GitTreeState != tt.wantTree ||
				got.Major != tt.wantMajor || got.Minor != tt.wantMinor || got.BuildDate != tt.wantBuildDt {
				t.Errorf("resolve() = %+v", got)
			}
			if got.GoVersion == "" || got.Platform == "" || got.Compiler == "" {
				t.Errorf("runtime fields missing: %+v", got)
			}
		})
	}
}
