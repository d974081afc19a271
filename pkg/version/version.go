// Package version reports which apictl build is running, in the shape of kube's /version document.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
)

// Set by the linker at release time (see goreleaser.yaml):
//
//	-X github.com/apictl/apictl/pkg/version.gitVersion=v1.2.3
//
// They are never written at run time.
var (
	gitVersion   = ""
	gitCommit    = ""
	gitTreeState = ""
	buildDate    = ""
)

// Info is the version document. Field names and JSON keys match kube's /version so that kubectl
// version and client-go's discovery.ServerVersion read it.
type Info struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// String returns the git version, the one value people ask for.
func (i Info) String() string { return i.GitVersion }

// Get returns the linker-set values, falling back to what the Go toolchain stamped into the binary
// (module version and VCS settings) for builds made with plain `go build` or `go install`.
func Get() Info {
	return resolve(gitVersion, gitCommit, gitTreeState, buildDate, readBuildInfo)
}

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

var semver = regexp.MustCompile(`^v?(\d+)\.(\d+)\.`)

func resolve(ver, commit, tree, date string, read func() (*debug.BuildInfo, bool)) Info {
	if bi, ok := read(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && commit == "":
				commit = s.Value
			case s.Key == "vcs.time" && date == "":
				date = s.Value
			case s.Key == "vcs.modified" && tree == "":
				tree = "clean"
				if s.Value == "true" {
					tree = "dirty"
				}
			}
		}
	}
	if ver == "" {
		ver = "v0.0.0-devel"
	}
	info := Info{
		GitVersion:   ver,
		GitCommit:    commit,
		GitTreeState: tree,
		BuildDate:    date,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
	if m := semver.FindStringSubmatch(ver); m != nil {
		info.Major, info.Minor = m[1], m[2]
	}
	return info
}
