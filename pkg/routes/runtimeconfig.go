package routes

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RuntimeConfigError is one --runtime-config entry that cannot be applied. Its message reads like
// apictl's flag problems: `--runtime-config apps/v1=true has unknown api groups apps: ...`.
type RuntimeConfigError struct {
	// Key and Value are the entry as given (a key without "=" has the value "").
	Key, Value string
	// Message says what is wrong and how to fix it, without the key.
	Message string
}

func (e *RuntimeConfigError) Error() string {
	return "--runtime-config " + e.Key + "=" + e.Value + " " + e.Message
}

// The api/* keys of --runtime-config, applied in this order before group versions.
var versionMatchers = []struct {
	key   string
	match func(version string) bool
}{
	{"api/all", func(string) bool { return true }},
	{"api/ga", func(v string) bool { return versionKind(v) == "ga" }},
	{"api/beta", func(v string) bool { return versionKind(v) == "beta" }},
	{"api/alpha", func(v string) bool { return versionKind(v) == "alpha" }},
}

// versionKind classifies v<N>, v<N>beta<M> and v<N>alpha<M>; anything else is "".
func versionKind(v string) string {
	rest, ok := strings.CutPrefix(v, "v")
	n := leadingDigits(rest)
	if !ok || n == 0 {
		return ""
	}
	rest = rest[n:]
	for _, kind := range []string{"beta", "alpha"} {
		if after, ok := strings.CutPrefix(rest, kind); ok {
			if m := leadingDigits(after); m > 0 && m == len(after) {
				return kind
			}
			return ""
		}
	}
	if rest == "" {
		return "ga"
	}
	return ""
}

func leadingDigits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// runtimeConfigEntry is one parsed entry: the key as given and its group, version and resource.
type runtimeConfigEntry struct {
	key, value string
	gv         schema.GroupVersion
	resource   string
	enabled    bool
}

// ApplyRuntimeConfig enables and disables group versions and resources of api with kube's
// --runtime-config semantics: api/all, api/ga, api/beta and api/alpha apply first, in that order,
// then <group>/<version> entries, then <group>/<version>/<resource> entries. v1, api/v1 and /v1 name
// the core group; api/legacy is accepted and ignored. Group versions and resources must exist in
// api (built-in or declared by a CRD). Disabled resources, and versions and groups left empty, are
// removed from the returned API. All problems are returned at once as *RuntimeConfigError values
// joined with errors.Join, sorted by key.
func ApplyRuntimeConfig(api *API, runtimeConfig map[string]string) (*API, error) {
	return applyRuntimeConfig(api, runtimeConfig, nil)
}

// applyRuntimeConfig skips the existence checks for groups in unchecked: groups whose CRDs failed
// to load, which would otherwise be reported a second time as unknown.
func applyRuntimeConfig(api *API, runtimeConfig map[string]string, unchecked map[string]bool) (*API, error) {
	if len(runtimeConfig) == 0 {
		return api, nil
	}
	keys := make([]string, 0, len(runtimeConfig))
	for k := range runtimeConfig {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var errs []error
	fail := func(key, value, format string, args ...any) {
		errs = append(errs, &RuntimeConfigError{Key: key, Value: value, Message: fmt.Sprintf(format, args...)})
	}
	effective := 0
	for _, k := range keys {
		if k != "api/legacy" {
			effective++
		}
	}
	if effective == 1 && runtimeConfig["api/all"] == "false" {
		fail("api/all", "false", "is an invalid key with only api/all=false: also enable the group versions you want, like api/all=false,v1=true")
	}

	matchers := map[string]bool{}
	var entries []runtimeConfigEntry
	for _, key := range keys {
		value := runtimeConfig[key]
		switch {
		case key == "api/legacy":
			continue
		case isMatcherKey(key):
			if value != "true" && value != "false" {
				fail(key, value, "has an invalid value %s=%s: api/* keys take exactly true or false", key, value)
				continue
			}
			matchers[key] = value == "true"
			continue
		}
		e, msg := parseRuntimeConfigKey(key, value)
		if msg != "" {
			fail(key, value, "%s", msg)
			continue
		}
		if unchecked[e.gv.Group] {
			continue
		}
		if msg := checkRuntimeConfigTarget(api, e); msg != "" {
			fail(key, value, "%s", msg)
			continue
		}
		entries = append(entries, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return filterAPI(api, matchers, entries), nil
}

func isMatcherKey(key string) bool {
	for _, m := range versionMatchers {
		if m.key == key {
			return true
		}
	}
	return false
}

// parseRuntimeConfigKey reads <group>/<version>[/<resource>] and the core spellings v1, api/v1
// and /v1, and the value ("" means true). It returns a message for a malformed entry.
func parseRuntimeConfigKey(key, value string) (runtimeConfigEntry, string) {
	e := runtimeConfigEntry{key: key, value: value}
	normalized := key
	switch {
	case key == "api/v1" || strings.HasPrefix(key, "api/v1/"):
		normalized = strings.TrimPrefix(key, "api")
	case key == "v1" || strings.HasPrefix(key, "v1/"):
		normalized = "/" + key
	case strings.HasPrefix(key, "api/"):
		return e, fmt.Sprintf("has an invalid key %s: use api/all, api/ga, api/beta, api/alpha or <group>/<version>", key)
	}
	parts := strings.Split(normalized, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[len(parts)-1] == "" || (len(parts) == 3 && parts[1] == "") {
		return e, fmt.Sprintf("has an invalid key %s: use <group>/<version>, like apps/v1, or v1 for the core group", key)
	}
	if len(parts) == 3 {
		if strings.ToLower(parts[2]) != parts[2] {
			return e, fmt.Sprintf("has an invalid key %s: group/version/resource and resource is always lowercase plural, not %q", key, parts[2])
		}
		e.resource = parts[2]
	}
	e.gv = schema.GroupVersion{Group: parts[0], Version: parts[1]}
	e.enabled = true
	if value != "" {
		b, err := strconv.ParseBool(value)
		if err != nil {
			return e, fmt.Sprintf("has an invalid value of %s: %s, err: %v", key, value, err)
		}
		e.enabled = b
	}
	return e, ""
}

// checkRuntimeConfigTarget reports a group, version or resource that api does not have.
func checkRuntimeConfigTarget(api *API, e runtimeConfigEntry) string {
	g, ok := api.Group(e.gv.Group)
	if !ok {
		return fmt.Sprintf("has unknown api groups %s: this server serves %s; declare other groups with --api-config CRD manifests",
			displayGroup(e.gv.Group), strings.Join(groupVersionList(api), ", "))
	}
	for _, v := range g.Versions {
		if v.Name != e.gv.Version {
			continue
		}
		if e.resource == "" {
			return ""
		}
		for _, r := range v.Resources {
			if r.Plural == e.resource {
				return ""
			}
		}
		names := make([]string, len(v.Resources))
		for i, r := range v.Resources {
			names[i] = r.Plural
		}
		return fmt.Sprintf("names resource %s that %s does not serve: it serves %s",
			e.resource, groupVersionString(g.Name, v.Name), strings.Join(names, ", "))
	}
	versions := make([]string, len(g.Versions))
	for i, v := range g.Versions {
		versions[i] = groupVersionString(g.Name, v.Name)
	}
	return fmt.Sprintf("names group version %s that has not been registered: use %s",
		groupVersionString(e.gv.Group, e.gv.Version), strings.Join(versions, " or "))
}

func displayGroup(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

func groupVersionList(api *API) []string {
	var out []string
	for _, gv := range api.GroupVersions() {
		out = append(out, groupVersionString(gv.Group, gv.Version))
	}
	return out
}

// filterAPI keeps what the matchers and entries leave enabled.
func filterAPI(api *API, matchers map[string]bool, entries []runtimeConfigEntry) *API {
	versionOn := map[schema.GroupVersion]bool{}
	for _, gv := range api.GroupVersions() {
		on := true
		for _, m := range versionMatchers {
			if enabled, ok := matchers[m.key]; ok && m.match(gv.Version) {
				on = enabled
			}
		}
		versionOn[gv] = on
	}
	resourceOn := map[resourceKey]bool{}
	for _, e := range entries {
		if e.resource == "" {
			versionOn[e.gv] = e.enabled
		}
	}
	for _, e := range entries {
		if e.resource != "" {
			resourceOn[resourceKey{e.gv.Group, e.gv.Version, e.resource}] = e.enabled
		}
	}
	var groups []Group
	for _, g := range api.Groups() {
		var versions []Version
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Name}
			var resources []Resource
			for _, r := range v.Resources {
				on, set := resourceOn[resourceKey{g.Name, v.Name, r.Plural}]
				if set && on || !set && versionOn[gv] {
					resources = append(resources, r)
				}
			}
			if len(resources) > 0 {
				versions = append(versions, Version{Name: v.Name, Resources: resources})
			}
		}
		if len(versions) > 0 {
			groups = append(groups, Group{Name: g.Name, Versions: versions})
		}
	}
	return newAPI(groups)
}
