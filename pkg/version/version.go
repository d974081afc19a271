// Package version reports which apictl build is running, in the shape of kube's /version document.
//
// apictl serves the Kubernetes API of the k8s.io modules it is built with, so /version answers that
// Kubernetes version, as k3s does (v1.37.2+k3s1): clients and charts compare it (helm's kubeVersion,
// kubectl's version skew warning). apictl's own version rides in the build metadata:
// v1.37.2+apictl.0.4.0 for a release, v1.37.2+apictl.devel for a build from a work tree.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Set by the linker at release time (see goreleaser.yaml):
//
//	-X github.com/apictl/apictl/pkg/version.gitVersion=v1.2.3
//
// gitVersion is apictl's own version. They are never written at run time.
var (
	gitVersion   = ""
	gitCommit    = ""
	gitTreeState = ""
	buildDate    = ""
)

// apiModule is the module whose version names the Kubernetes release served: k8s.io modules v0.X.Y
// ship with Kubernetes v1.X.Y.
const apiModule = "k8s.io/apimachinery"

// fallbackKubernetes is used only when the binary carries no module information (a build with
// -buildvcs and module data stripped); a test keeps it equal to go.mod's k8s.io modules.
const fallbackKubernetes = "v1.37.2"

// Info is the version document. Field names and JSON keys match kube's /version so that kubectl
// version and client-go's discovery.ServerVersion read it.
type Info struct {
	Major                 string `json:"major"`
	Minor                 string `json:"minor"`
	EmulationMajor        string `json:"emulationMajor,omitempty"`
	EmulationMinor        string `json:"emulationMinor,omitempty"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor,omitempty"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor,omitempty"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
}

// String returns the git version, the one value people ask for.
func (i Info) String() string { return i.GitVersion }

// Apictl returns apictl's own version, the build metadata of GitVersion: "0.4.0" or "devel".
func (i Info) Apictl() string {
	_, meta, _ := strings.Cut(i.GitVersion, "+apictl.")
	return meta
}

// Kubernetes returns the Kubernetes release served, GitVersion without the build metadata.
func (i Info) Kubernetes() string {
	v, _, _ := strings.Cut(i.GitVersion, "+")
	return v
}

// Get returns the version document of this binary: the Kubernetes version from the k8s.io modules it
// was built with, and apictl's from the linker or, for `go build` and `go install`, from what the Go
// toolchain stamped into it.
func Get() Info {
	return resolve(gitVersion, gitCommit, gitTreeState, buildDate, readBuildInfo)
}

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

var semver = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

func resolve(ver, commit, tree, date string, read func() (*debug.BuildInfo, bool)) Info {
	kube := fallbackKubernetes
	if bi, ok := read(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, dep := range bi.Deps {
			if dep.Path != apiModule {
				continue
			}
			if m := semver.FindStringSubmatch(dep.Version); m != nil && m[1] == "0" {
				kube = fmt.Sprintf("v1.%s.%s", m[2], m[3])
			}
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
	info := Info{
		GitVersion:   kube + "+apictl." + buildMetadata(ver),
		GitCommit:    commit,
		GitTreeState: tree,
		BuildDate:    date,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
	if m := semver.FindStringSubmatch(kube); m != nil {
		// kube-apiserver emulates its own version by default and stays compatible with the minor
		// version before it.
		info.Major, info.Minor = m[1], m[2]
		info.EmulationMajor, info.EmulationMinor = m[1], m[2]
		minor, _ := strconv.Atoi(m[2])
		info.MinCompatibilityMajor, info.MinCompatibilityMinor = m[1], strconv.Itoa(max(minor-1, 0))
	}
	return info
}

// buildMetadata turns apictl's version into semver build metadata (dot-separated [0-9A-Za-z-]):
// v0.4.0 → 0.4.0, a pseudo-version's "+dirty" → ".dirty", nothing known → devel.
func buildMetadata(ver string) string {
	ver = strings.TrimPrefix(ver, "v")
	if ver == "" {
		return "devel"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r == '.':
			return r
		}
		return '.'
	}, ver)
}
