// Package features holds apictl's feature gates: which exist, their maturity and defaults, and the
// parsing of --feature-gates with kube's syntax and error messages.
package features

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Stage is the maturity of a feature.
type Stage string

// Stages, as kube names them in help text.
const (
	Alpha      Stage = "ALPHA"
	Beta       Stage = "BETA"
	GA         Stage = ""
	Deprecated Stage = "DEPRECATED"
)

// Gate names. Each one guards a behaviour of `apictl serve` that clients can observe.
const (
	// AllAlpha and AllBeta switch every alpha or beta gate at once, as in kube.
	AllAlpha = "AllAlpha"
	AllBeta  = "AllBeta"

	// WatchList lets watches ask for their initial state with sendInitialEvents=true.
	WatchList = "WatchList"

	// AggregatedDiscoveryEndpoint serves apidiscovery.k8s.io/v2 on /api and /apis when asked for.
	// GA and locked on, as in kube 1.30+.
	AggregatedDiscoveryEndpoint = "AggregatedDiscoveryEndpoint"

	// RemoteRequestHeaderUID allows --requestheader-uid-headers: a front proxy may assert the user's
	// UID. Beta and on by default since kube 1.33.
	RemoteRequestHeaderUID = "RemoteRequestHeaderUID"

	// APIResponseCompression gzips large responses to API requests of clients that accept it. Beta
	// and on by default since kube 1.16.
	APIResponseCompression = "APIResponseCompression"
)

// Spec describes one gate.
type Spec struct {
	Default       bool
	Stage         Stage
	LockToDefault bool
}

// Known returns the gates apictl knows, freshly allocated so callers cannot change shared state.
func Known() map[string]Spec {
	return map[string]Spec{
		WatchList:                   {Default: true, Stage: Beta},
		AggregatedDiscoveryEndpoint: {Default: true, Stage: GA, LockToDefault: true},
		RemoteRequestHeaderUID:      {Default: true, Stage: Beta},
		APIResponseCompression:      {Default: true, Stage: Beta},
	}
}

// Gates is an immutable set of resolved feature gates.
type Gates struct {
	enabled map[string]bool
}

// Enabled reports whether the named gate is on. Unknown names are off.
func (g Gates) Enabled(name string) bool {
	if v, ok := g.enabled[name]; ok {
		return v
	}
	spec, ok := Known()[name]
	return ok && spec.Default
}

// Defaults returns the gates with every default.
func Defaults() Gates { return Gates{} }

// Parse resolves raw `Name=bool` settings against the known gates. It reports every problem it finds,
// unlike kube, which stops at the first unknown gate.
func Parse(raw map[string]string) (Gates, []error) {
	known := Known()
	enabled := map[string]bool{}
	var errs []error
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		value := strings.TrimSpace(raw[name])
		if value == "" {
			errs = append(errs, fmt.Errorf("missing bool value for %s", name))
			continue
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value of %s=%s, err: %v", name, value, err))
			continue
		}
		if name == AllAlpha || name == AllBeta {
			stage := Alpha
			if name == AllBeta {
				stage = Beta
			}
			for gate, spec := range known {
				if spec.Stage == stage && !spec.LockToDefault {
					if _, explicit := raw[gate]; !explicit {
						enabled[gate] = on
					}
				}
			}
			continue
		}
		spec, ok := known[name]
		if !ok {
			errs = append(errs, fmt.Errorf("unrecognized feature gate: %s (known gates: %s)", name, strings.Join(sortedNames(known), ", ")))
			continue
		}
		if spec.LockToDefault && on != spec.Default {
			errs = append(errs, fmt.Errorf("cannot set feature gate %v to %v, feature is locked to %v", name, on, spec.Default))
			continue
		}
		enabled[name] = on
	}
	return Gates{enabled: enabled}, errs
}

// Help lists the settable gates as kube's --feature-gates help does: sorted, GA and deprecated gates
// hidden, AllAlpha and AllBeta always shown.
func Help() []string {
	lines := []string{
		AllAlpha + "=true|false (ALPHA - default=false)",
		AllBeta + "=true|false (BETA - default=false)",
	}
	known := Known()
	for _, name := range sortedNames(known) {
		spec := known[name]
		if spec.Stage == GA || spec.Stage == Deprecated {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s=true|false (%s - default=%t)", name, spec.Stage, spec.Default))
	}
	sort.Strings(lines)
	return lines
}

func sortedNames(known map[string]Spec) []string {
	out := []string{AllAlpha, AllBeta}
	for name := range known {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
