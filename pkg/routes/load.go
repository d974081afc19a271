package routes

import (
	"errors"
)

// LoadAPI is the API a server configured with --api-config and --runtime-config serves: the
// built-in API plus the CRDs in the manifests, with the runtime configuration applied. It returns
// every problem at once: *CRDError values for manifests and *RuntimeConfigError values for
// --runtime-config entries, joined with errors.Join. The API is nil when there are problems.
func LoadAPI(apiConfig []string, runtimeConfig map[string]string) (*API, error) {
	api, _, err := LoadAPIAndCRDs(apiConfig, runtimeConfig)
	return api, err
}

// LoadAPIAndCRDs is LoadAPI that also returns the CRDs it read, for the parts of a server that need
// more of a CRD than the API model keeps (its scale paths and full schemas for validation).
func LoadAPIAndCRDs(apiConfig []string, runtimeConfig map[string]string) (*API, []CRD, error) {
	crds, crdErr := ReadCRDFiles(apiConfig)
	api, addErr := Builtin().WithCRDs(crds)
	// A runtime-config entry for the group of a broken CRD would only repeat the CRD's problem.
	unchecked := map[string]bool{}
	for _, err := range flatten(errors.Join(crdErr, addErr)) {
		var ce *CRDError
		if errors.As(err, &ce) && ce.Group != "" {
			unchecked[ce.Group] = true
		}
	}
	api, rcErr := applyRuntimeConfig(api, runtimeConfig, unchecked)
	if err := errors.Join(crdErr, addErr, rcErr); err != nil {
		return nil, nil, err
	}
	return api, crds, nil
}

// flatten lists the leaves of joined errors.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// Errors splits an error returned by this package into its problems, for callers that report each
// on its own line (as *CRDError, *RuntimeConfigError or plain errors).
func Errors(err error) []error { return flatten(err) }
