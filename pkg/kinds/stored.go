package kinds

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StoredForm is how a kind served from another kind's storage reads and writes its objects: kube's
// cohabitating resources, events.k8s.io/v1 Events being core v1 Events. The two are one object seen
// through both APIs, with one resourceVersion and one watch cache.
type StoredForm struct {
	// Resource is the resource whose keys hold the objects, GVK the kind they are stored as.
	Resource schema.GroupVersionResource
	GVK      schema.GroupVersionKind
	// New returns an empty stored object.
	New func() runtime.Object
	// FieldLabels maps the fields a list or watch of the served kind may select by to the stored
	// kind's (kube's field label conversion); a field not in it is not supported.
	FieldLabels map[string]string
	// ToStored converts a served object to its stored form; FromStored converts back. Neither
	// modifies its argument.
	ToStored   func(runtime.Object) (runtime.Object, error)
	FromStored func(runtime.Object) (runtime.Object, error)
}

// FieldSelectors are the fields beyond metadata.name and metadata.namespace that lists and watches of
// a kind may select by: its field label conversion and its strategy's GetAttrs in kube. A kind with
// them refuses any other field with kube's "field label not supported".
type FieldSelectors struct {
	// Names are the selectable fields.
	Names []string
	// New returns an empty reading, into which a stored object's JSON is decoded once for every
	// selector of a watch: a struct embedding SelectableMeta, with JSON tags for the fields it reads.
	New func() FieldReading
}

// FieldReading is what a list or watch selects one object by, decoded from its stored JSON.
type FieldReading interface {
	// Meta is the object's name, namespace and labels.
	Meta() *SelectableMeta
	// AddFields adds the kind's selectable fields (FieldSelectors.Names, every one of them) to set.
	AddFields(set fields.Set)
}

// SelectableMeta is the metadata every reading selects by; a kind's FieldReading embeds it.
type SelectableMeta struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// Meta returns m: a kind's reading that embeds SelectableMeta implements FieldReading's Meta.
func (m *SelectableMeta) Meta() *SelectableMeta { return m }

// KindFirstValidator is a Strategy whose create validation runs before the generic metadata checks,
// which run only when it passes, as in kube's store for Events (whose own checks do not look at
// metadata, or only with a stricter name rule than the store's).
type KindFirstValidator interface {
	ValidatesKindFirst()
}
