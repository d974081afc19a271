package apiserver

import (
	"fmt"

	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
)

// addKindControllers registers the controllers of the kinds described in packages of their own
// (kinds.Kind.Controllers), for each kind the server serves: a kind turned off by --runtime-config
// has no objects to keep.
// signing is the CA the CSR signers sign with.
func (a *assembly) addKindControllers() error {
	cfg, cl, ctrls, signing := a.cfg, a.cl, &a.ctrls, a.o.Signing.Effective()
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
