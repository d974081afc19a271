package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/storage/encryption"
)

// storedResources lists the resources whose objects the server keeps in etcd, each once whatever its
// versions: those --encryption-provider-config may encrypt.
func storedResources(api *routes.API) []schema.GroupResource {
	seen := map[schema.GroupResource]bool{}
	var out []schema.GroupResource
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				gr := schema.GroupResource{Group: g.Name, Resource: r.Plural}
				if r.CreateOnly() || r.StoredAs != nil || seen[gr] {
					continue // nothing stored, or stored as another resource (listed as that one)
				}
				seen[gr] = true
				out = append(out, gr)
			}
		}
	}
	return out
}

// addEncryptionReload rereads --encryption-provider-config while the server runs, with
// --encryption-provider-config-automatic-reload, under kube's post-start hook name; the shutdown waits
// for it through bg.
func (a *assembly) addEncryptionReload() error {
	s, o, t, log, bg := a.server, a.o, a.st.encryption, a.cfg.Logger, &a.bg
	if t == nil || !o.Encryption.AutomaticReload {
		return nil
	}
	return s.AddPostStartHook("start-encryption-provider-config-automatic-reload", func(ctx context.Context) error {
		bg.goRun(func() {
			t.Reload(ctx, o.Encryption.ProviderConfig, encryption.DefaultReloadInterval, log.With("component", "encryption-config"))
		})
		return nil
	})
}
