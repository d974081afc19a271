package flags

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// APIEnablementOptions say which APIs the server offers: the built-in groups, switched on and off by
// --runtime-config, plus the resources declared in --api-config CRD manifests.
type APIEnablementOptions struct {
	// RuntimeConfig maps group/version keys (and api/all, api/ga, api/beta, api/alpha) to true or false.
	RuntimeConfig map[string]string
	// APIConfig are files or directories of CustomResourceDefinition manifests.
	APIConfig []string
}

// NewAPIEnablementOptions returns empty settings: every built-in group version enabled.
func NewAPIEnablementOptions() *APIEnablementOptions { return &APIEnablementOptions{} }

// AddFlags registers the API enablement flags with the current values as defaults.
func (o *APIEnablementOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(newMapStringString(&o.RuntimeConfig), "runtime-config",
		"A set of key=value pairs that enable or disable built-in APIs. Supported options are:\n"+
			"v1=true|false for the core API group\n"+
			"<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\n"+
			"api/all=true|false controls all API versions\n"+
			"api/ga=true|false controls all API versions of the form v[0-9]+\n"+
			"api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\n"+
			"api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+\n"+
			"api/legacy is deprecated, and will be removed in a future version")
	fs.StringSliceVar(&o.APIConfig, "api-config", o.APIConfig,
		"Files or directories of CustomResourceDefinition manifests (apiextensions.k8s.io/v1, YAML or JSON, multi-document) "+
			"whose resources the server serves besides the built-in ones. Repeatable.")
}

// Complete rewrites the core group's spellings to the one key kube uses internally (/v1) and drops
// api/legacy, as kube's Complete does.
func (o *APIEnablementOptions) Complete() error {
	if len(o.RuntimeConfig) == 0 {
		return nil
	}
	out := make(map[string]string, len(o.RuntimeConfig))
	for key, value := range o.RuntimeConfig {
		switch {
		case key == "api/legacy":
			continue
		case key == "v1" || strings.HasPrefix(key, "v1/") || key == "api/v1" || strings.HasPrefix(key, "api/v1/"):
			key = "/" + strings.TrimPrefix(key, "api/")
		}
		out[key] = value
	}
	o.RuntimeConfig = out
	return nil
}

// Validate checks the syntax of --runtime-config with kube's messages and that every --api-config path
// exists. Whether a group version is known is checked against the API model in ServerOptions.
func (o *APIEnablementOptions) Validate() []error {
	const s = SectionAPIEnablement
	var errs []error
	if len(o.RuntimeConfig) == 1 && o.RuntimeConfig["api/all"] == "false" {
		errs = append(errs, problemf(s, "runtime-config", "api/all=false",
			"is an invalid key with only api/all=false: also enable the group versions you want, like api/all=false,v1=true"))
	}
	for key, value := range o.RuntimeConfig {
		pair := key + "=" + value
		switch {
		case key == "api/all" || key == "api/ga" || key == "api/beta" || key == "api/alpha":
			if value != "true" && value != "false" {
				errs = append(errs, problemf(s, "runtime-config", pair, "has an invalid value %s=%s: api/* keys take exactly true or false", key, value))
			}
		case strings.HasPrefix(key, "api/"):
			errs = append(errs, problemf(s, "runtime-config", pair, "has an invalid key %s: use api/all, api/ga, api/beta, api/alpha or <group>/<version>", key))
		default:
			if p := checkGroupVersionKey(key, value); p != nil {
				errs = append(errs, p)
			}
		}
	}
	for _, path := range o.APIConfig {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, problemf(s, "api-config", path, "does not exist: give a CRD manifest file or a directory of them"))
		} else if err != nil {
			errs = append(errs, problemf(s, "api-config", path, "cannot be read: %v", unwrapPathError(err)))
		}
	}
	sortProblems(errs)
	return errs
}

// checkGroupVersionKey checks a <group>/<version>[/<resource>] key and its value.
func checkGroupVersionKey(key, value string) *Problem {
	const s = SectionAPIEnablement
	pair := key + "=" + value
	parts := strings.Split(key, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[len(parts)-1] == "" || (len(parts) == 3 && parts[1] == "") {
		return problemf(s, "runtime-config", pair, "has an invalid key %s: use <group>/<version>, like apps/v1, or v1 for the core group", key)
	}
	if len(parts) == 3 && strings.ToLower(parts[2]) != parts[2] {
		return problemf(s, "runtime-config", pair,
			"has an invalid key %s: group/version/resource and resource is always lowercase plural, not %q", key, parts[2])
	}
	if value != "" {
		if _, err := strconv.ParseBool(value); err != nil {
			return problemf(s, "runtime-config", pair, "has an invalid value of %s: %s, err: %v", key, value, err)
		}
	}
	return nil
}
