package flags

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/routes"
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

// Validate checks --runtime-config and --api-config exactly as the server will load them: the
// syntax of every entry with kube's messages, that each group version and resource it names is
// served (built in, or declared by a CRD), and that every manifest holds valid, non-colliding
// CustomResourceDefinitions. Each problem names the entry, or the file and document.
func (o *APIEnablementOptions) Validate() []error {
	const s = SectionAPIEnablement
	var errs []error
	_, err := routes.LoadAPI(o.APIConfig, o.RuntimeConfig)
	for _, e := range routes.Errors(err) {
		var crd *routes.CRDError
		var rc *routes.RuntimeConfigError
		switch {
		case errors.As(e, &crd):
			errs = append(errs, problemf(s, "api-config", crd.File, "%s", crd.Detail()))
		case errors.As(e, &rc):
			errs = append(errs, problemf(s, "runtime-config", rc.Key+"="+rc.Value, "%s", rc.Message))
		default:
			errs = append(errs, &Problem{Section: s, Message: e.Error()})
		}
	}
	sortProblems(errs)
	return errs
}
