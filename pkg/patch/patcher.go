package patch

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/apictl/apictl/pkg/routes"
)

// Target is what a write addresses: a resource of the API, or one of its subresources.
type Target struct {
	Resource schema.GroupVersionResource
	// Subresource is "" for the resource itself, else status, finalize or scale.
	Subresource string
}

// String names the target as kube's messages do: configmaps, namespaces/status, with the group.
func (t Target) String() string {
	s := t.Resource.GroupResource().String()
	if t.Subresource != "" {
		s += "/" + t.Subresource
	}
	return s
}

// Patcher applies patches and records field ownership for the resources of one API. It is
// immutable once built, apart from the ownership machinery it builds on first use, and safe for
// concurrent use.
type Patcher struct {
	targets map[Target]*target
}

// target is everything Patcher knows about one resource or subresource.
type target struct {
	kind
	gr          schema.GroupResource
	subresource string
	namespaced  bool
	// accepted are the PATCH media types, in the order kube lists them in its 415 message.
	accepted []types.PatchType
	// strategic is the patch metadata of the Go type; nil where strategic merge patch is refused.
	strategic strategicpatch.LookupPatchMeta
	// ownership returns the target's server-side apply machinery, built on the first write (see
	// ownership.go); every later call returns the same value.
	ownership func() (*ownership, error)
}

// New prepares the patching of every resource of api and of its status, finalize and scale
// subresources. api must not change afterwards.
//
// What every request needs (the accepted media types, the strategic merge patch metadata) is
// ready when New returns. The structured-merge-diff schemas of the API's kinds, built from its
// OpenAPI models, and the field managers on them are only needed by writes: they are built once,
// by the first write that needs them, so that start-up neither spends the time nor leaves the
// garbage nor touches the code (BenchmarkNew, BenchmarkNewAndFirstWrite). A failure to build them
// (a bug, not bad input) fails those writes with a 500.
//
// New also sets json-patch's process-wide copy limit to MaxJSONPatchCopyBytes unless a stricter one
// is set.
func New(api *routes.API) (*Patcher, error) {
	return newPatcher(api, converters{
		api:  sync.OnceValues(func() (managedfields.TypeConverter, error) { return newTypeConverter(api) }),
		wrap: newTargetConverter,
	})
}

func newPatcher(api *routes.API, converter converters) (*Patcher, error) {
	limitJSONPatchCopies()
	p := &Patcher{targets: map[Target]*target{}}
	for _, g := range api.Groups() {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Name}
			for i := range v.Resources {
				if err := p.addResource(gv, &v.Resources[i], converter); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
}

// addResource adds the targets of one resource: itself and the subresources whose objects the
// library knows how to hold (the parent's kind, or a kind with a Go type such as Scale).
func (p *Patcher) addResource(gv schema.GroupVersion, res *routes.Resource, converter converters) error {
	gvr := gv.WithResource(res.Plural)
	parent := gv.WithKind(res.Kind)
	goType := res.GoType
	if res.Custom {
		goType = nil
	}
	_, hasStatus := res.Subresource("status")
	var reset []string
	if hasStatus {
		// The main resource cannot change status; kube's strategies reset it, so nobody owns it there.
		reset = []string{"status"}
	}
	if err := p.add(Target{Resource: gvr}, res, kind{gvk: parent, goType: goType}, reset, converter); err != nil {
		return err
	}
	for _, sub := range res.Subresources {
		gvk := sub.GroupVersionKind(gv)
		k := kind{gvk: gvk, goType: goType}
		var reset []string
		switch {
		case gvk == parent && sub.Name == "status":
			reset = statusResetFields(gv.Group, res.Custom)
		case gvk == parent && sub.Name == "finalize":
			reset = []string{"status"}
		case gvk == parent:
		case sub.GoType != nil:
			k.goType = sub.GoType
		default:
			continue
		}
		if err := p.add(Target{Resource: gvr, Subresource: sub.Name}, res, k, reset, converter); err != nil {
			return err
		}
	}
	return nil
}

// statusResetFields are the top-level fields a write to /status cannot change. The status strategies
// of custom resources, APIServices, ValidatingAdmissionPolicies and StorageVersionMigrations also
// keep the stored metadata, so nobody owns metadata there either: labels a custom resource's /status
// body carries are not recorded (kube's customresource statusStrategy resets metadata and spec).
func statusResetFields(group string, custom bool) []string {
	if custom {
		return []string{"metadata", "spec"}
	}
	switch group {
	case "apiregistration.k8s.io", "admissionregistration.k8s.io", "storagemigration.k8s.io":
		return []string{"spec", "metadata"}
	}
	return []string{"spec"}
}

func (p *Patcher) add(t Target, res *routes.Resource, k kind, reset []string, converter converters) error {
	tg := &target{
		kind:        k,
		gr:          t.Resource.GroupResource(),
		subresource: t.Subresource,
		namespaced:  res.Namespaced,
		accepted:    []types.PatchType{types.JSONPatchType, types.MergePatchType},
	}
	// kube refuses strategic merge patch for every endpoint of a custom resource, its scale included.
	if k.typed() && !res.Custom {
		meta, err := strategicpatch.NewPatchMetaFromStruct(reflect.New(k.goType).Interface())
		if err != nil {
			return fmt.Errorf("reading the patch strategies of %s: %w", t, err)
		}
		tg.strategic = meta
		tg.accepted = append(tg.accepted, types.StrategicMergePatchType)
	}
	tg.accepted = append(tg.accepted, types.ApplyYAMLPatchType)
	custom := res.Custom
	tg.ownership = sync.OnceValues(func() (*ownership, error) {
		return newOwnership(t, k, custom, reset, converter)
	})
	p.targets[t] = tg
	return nil
}

// target looks up t; an unknown target is a handler bug, reported as an internal error.
func (p *Patcher) target(t Target) (*target, error) {
	tg, ok := p.targets[t]
	if !ok {
		return nil, internalError(fmt.Errorf("no patch support for %s in version %s", t, t.Resource.Version))
	}
	return tg, nil
}

// Accepted lists the PATCH media types t accepts, in the order kube lists them: JSON patch, merge
// patch, strategic merge patch (built-in kinds only), apply. It is nil for an unknown target.
func (p *Patcher) Accepted(t Target) []types.PatchType {
	tg, ok := p.targets[t]
	if !ok {
		return nil
	}
	return append([]types.PatchType(nil), tg.accepted...)
}

// ParseType reads the Content-Type of a PATCH request to t as kube's patch handler does, cutting
// parameters such as charset at the first ";" and nothing else (no trimming, no case folding), and
// returns the patch type, or kube's 415 listing the accepted media types.
func (p *Patcher) ParseType(t Target, contentType string) (types.PatchType, error) {
	tg, err := p.target(t)
	if err != nil {
		return "", err
	}
	if i := strings.Index(contentType, ";"); i > 0 {
		contentType = contentType[:i]
	}
	typ := types.PatchType(contentType)
	if err := tg.accepts(typ); err != nil {
		return "", err
	}
	return typ, nil
}

// accepts returns kube's 415 unless typ is one of the target's media types.
func (tg *target) accepts(typ types.PatchType) error {
	for _, a := range tg.accepted {
		if a == typ {
			return nil
		}
	}
	names := make([]string, len(tg.accepted))
	for i, a := range tg.accepted {
		names[i] = string(a)
	}
	return unsupportedMediaType(names)
}
