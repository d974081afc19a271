package apiserver

import (
	"fmt"

	"github.com/apictl/apictl/pkg/kinds"
	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
	"github.com/apictl/apictl/pkg/serve"
)

// addKindControllers registers the controllers of the kinds described in packages of their own
// (kinds.Kind.Controllers), for each kind the server serves: a kind turned off by --runtime-config
// has no objects to keep.
// signing is the CA the CSR signers sign with.
func addKindControllers(cfg *serve.Config, cl *clients, ctrls *clusterControllers, signing kinds.Signing) error {
	for _, k := range kindsbuiltin.Kinds() {
		if _, ok := cfg.API.Resource(k.Group, k.Version, k.Resource.Plural); !ok {
			continue
		}
		for _, c := range k.Controllers {
			run, err := c.New(kindsControllerContext(cfg, cl, c.Name, signing))
			if err != nil {
				return fmt.Errorf("building the %s of %s: %w", c.Name, k.Resource.Kind, err)
			}
			ctrls.add(c.Name, run)
		}
	}
	return nil
}
