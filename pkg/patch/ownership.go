package patch

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/routes/openapi"
)

// ownership is the server-side apply machinery of one target: its type converter (the API's,
// wrapped by typing.go) and its field manager. Patcher builds it on the target's first write: the
// schemas of every kind take milliseconds and a megabyte and a half of garbage to build, and touch
// code a server that only reads never needs.
type ownership struct {
	converter managedfields.TypeConverter
	fields    *managedfields.FieldManager
	// empty is the object a create is compared with: an object of the kind with nothing set but
	// apiVersion and kind. It is shared by every create, so nothing may modify it; the field
	// manager's update does not.
	empty runtime.Object
	// apiVersion, kind, subresource and resets describe the target for fastUpdate: the version its
	// entries record, its kind, its subresource, and the top-level fields its writes cannot change.
	apiVersion  string
	kind        string
	subresource string
	resets      map[string]bool
}

// converters gives each target its type converter: the API's, built once on first use, wrapped
// for the target by wrap (newTargetConverter; tests compare it with the library's own).
type converters struct {
	api  func() (managedfields.TypeConverter, error)
	wrap func(c managedfields.TypeConverter, empty runtime.Object) managedfields.TypeConverter
}

// newTypeConverter builds the structured-merge-diff schemas of every kind of api from its OpenAPI
// models.
func newTypeConverter(api *routes.API) (managedfields.TypeConverter, error) {
	models, err := openapi.Models(api)
	if err != nil {
		return nil, fmt.Errorf("building the OpenAPI models for server-side apply: %w", err)
	}
	converter, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("building the server-side apply schemas: %w", err)
	}
	return converter, nil
}

// newOwnership builds the field manager of t, whose objects are of kind k; reset are the top-level
// fields nobody owns there because the target's writes cannot change them.
func newOwnership(t Target, k kind, custom bool, reset []string, converter converters) (*ownership, error) {
	apiConverter, err := converter.api()
	if err != nil {
		return nil, err
	}
	empty := k.newObject()
	c := converter.wrap(apiConverter, empty)
	var resetFields map[fieldpath.APIVersion]fieldpath.Filter
	if len(reset) > 0 {
		set := fieldpath.NewSet()
		for _, f := range reset {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		resetFields = fieldpath.NewExcludeFilterSetMap(map[fieldpath.APIVersion]*fieldpath.Set{
			fieldpath.APIVersion(k.gvk.GroupVersion().String()): set,
		})
	}
	newManager := managedfields.NewDefaultFieldManager
	if custom {
		newManager = managedfields.NewDefaultCRDFieldManager
	}
	// The hub is the served version itself: objects are stored as they are served, so nothing converts.
	fm, err := newManager(c, k, k, k, k.gvk, k.gvk.GroupVersion(), t.Subresource, resetFields)
	if err != nil {
		return nil, fmt.Errorf("building the field manager of %s: %w", t, err)
	}
	resets := map[string]bool{}
	for _, f := range reset {
		resets[f] = true
	}
	return &ownership{converter: c, fields: fm, empty: empty,
		apiVersion: k.gvk.GroupVersion().String(), kind: k.gvk.Kind, subresource: t.Subresource, resets: resets}, nil
}

// ownershipOf returns the machinery of tg, or the 500 that says why it could not be built.
func (tg *target) ownershipOf() (*ownership, error) {
	own, err := tg.ownership()
	if err != nil {
		return nil, internalError(fmt.Errorf("preparing the field ownership of %s: %w", tg.gr, err))
	}
	return own, nil
}

// track runs the field manager's update bookkeeping on obj.
func (o *ownership) track(live, obj runtime.Object, manager string) runtime.Object {
	if live == nil {
		// A create compares against an empty object, as kube's create handler does.
		live = o.empty
	} else if out, ok := o.fastUpdate(live, obj, manager, time.Now()); ok {
		return out
	}
	out, err := o.fields.Update(live, obj, manager)
	if err == nil {
		return out
	}
	if m, err := meta.Accessor(obj); err == nil {
		if lm, err := meta.Accessor(live); err == nil {
			m.SetManagedFields(lm.GetManagedFields())
		}
	}
	return obj
}
