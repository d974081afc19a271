package flags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// ControllerNames are the cluster-wide controllers --controllers can turn on and off, by the names
// kube-controller-manager gives them where it has them. pkg/apiserver refuses to register one that
// is not listed here, so this list cannot drift from what runs.
var ControllerNames = []string{
	"apiservice-status-remote-available-controller",
	"certificatesigningrequest-cleaner-controller",
	"certificatesigningrequest-signing-controller",
	"clusterrole-aggregation-controller",
	"crd-status-and-cleanup-controller",
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"etcd-snapshot-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"resourcequota-controller",
	"root-ca-certificate-publisher-controller",
	"service-cidr-controller",
	"serviceaccount-controller",
	"storage-version-migrator-controller",
}

// ControllerOptions choose which cluster-wide controllers run, as kube-controller-manager's
// --controllers does. They sit with the leader election flags, which say where they run;
// kube-controller-manager prints both among its generic flags.
type ControllerOptions struct {
	// Controllers are kube's selectors: "*" for every controller, "name" to run one, "-name" to
	// leave one out.
	Controllers []string
}

// NewControllerOptions runs every controller.
func NewControllerOptions() *ControllerOptions {
	return &ControllerOptions{Controllers: []string{"*"}}
}

// AddFlags registers --controllers with kube-controller-manager's help.
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(""+
		"A list of cluster-wide controllers to enable. '*' enables all controllers, 'foo' enables the controller "+
		"named 'foo', '-foo' disables the controller named 'foo'. Turning one off leaves its work undone on "+
		"the whole cluster: without crd-status-and-cleanup-controller no CRD becomes Established, without "+
		"garbage-collector-controller ownerReferences delete nothing.\nAll controllers: %s",
		strings.Join(ControllerNames, ", ")))
}

// Complete trims the selectors.
func (o *ControllerOptions) Complete() error {
	for i, c := range o.Controllers {
		o.Controllers[i] = strings.TrimSpace(c)
	}
	return nil
}

// Validate reports every selector that names no controller.
func (o *ControllerOptions) Validate() []error {
	var errs []error
	for _, c := range o.Controllers {
		if c == "*" || slices.Contains(ControllerNames, strings.TrimPrefix(c, "-")) {
			continue
		}
		errs = append(errs, problemf(SectionLeaderElection, "controllers", c,
			"is not a controller: use '*', a name or -name, with these names: %s", strings.Join(ControllerNames, ", ")))
	}
	return errs
}

// Enabled says whether controller runs, as kube's IsControllerEnabled: an explicit "-name" or
// "name" wins over "*", and a controller not named runs only under "*".
func (o *ControllerOptions) Enabled(controller string) bool {
	star := false
	for _, c := range o.Controllers {
		switch c {
		case controller:
			return true
		case "-" + controller:
			return false
		case "*":
			star = true
		}
	}
	return star
}
