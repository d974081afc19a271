// Package events is the Event kind, which kube serves through two APIs: core v1 and events.k8s.io/v1.
// The two are one stored object (a core v1 Event) with one resourceVersion, seen through either; this
// package holds both descriptors and what they share: the conversion between the APIs, kube's
// validation (legacy through core, strict through events.k8s.io), the printer, the field selectors
// and the store rules.
package events

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/routes/model"
)

// storeRules are kube's Event store's: PUT creates, the garbage collector never handles events, and
// each lives for --event-ttl.
var storeRules = kinds.StoreRules{DeletePolicy: kinds.Unsupported, AllowCreateOnUpdate: true, ExpireAfterEventTTL: true}

var upstream = []kinds.Upstream{
	{Path: "pkg/apis/core/validation/events.go", Version: "v1.37.2", Parts: "ValidateEventCreate, ValidateEventUpdate, legacyValidateEvent"},
	{Path: "pkg/apis/events/v1/conversion.go", Version: "v1.37.2", Parts: "the conversions to and from core, AddFieldLabelConversionsForEvent"},
	{Path: "pkg/apis/core/v1/conversion.go", Version: "v1.37.2", Parts: "AddFieldLabelConversionsForEvent (core v1)"},
	{Path: "pkg/registry/core/event/strategy.go", Version: "v1.37.2", Parts: "ToSelectableFields"},
	{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printEvent"},
}

// Kind describes core v1 Events.
func Kind() kinds.Kind {
	return kinds.Kind{
		Group:      corev1.GroupName,
		Version:    "v1",
		Resource:   resource(reflect.TypeFor[corev1.Event](), reflect.TypeFor[corev1.EventList]()),
		NameRule:   pathSegmentName,
		Strategy:   strategy{},
		Table:      table(),
		Store:      storeRules,
		Fields:     fieldSelectors(),
		Equivalent: Convert,
		Upstream:   upstream,
	}
}

// EventsV1Kind describes events.k8s.io/v1 Events: stored as core v1 Events (so discovery's
// storageVersionHash is the core one's), printed with the core printer, listed with the same short
// name.
func EventsV1Kind() kinds.Kind {
	return kinds.Kind{
		Group:      eventsv1.GroupName,
		Version:    "v1",
		Resource:   resource(reflect.TypeFor[eventsv1.Event](), reflect.TypeFor[eventsv1.EventList]()),
		NameRule:   pathSegmentName,
		Strategy:   strategy{strict: true},
		Table:      eventsV1Table(),
		Store:      storeRules,
		StoredAs:   storedForm(),
		Equivalent: Convert,
		Upstream:   upstream,
	}
}

// resource is the route-model entry of either API, with the core printer's columns.
func resource(obj, list reflect.Type) model.Resource {
	event := corev1.Event{}.SwaggerDoc()
	return model.Resource{
		Plural:     "events",
		Singular:   "event",
		Kind:       "Event",
		Namespaced: true,
		Verbs:      model.StandardVerbs(),
		ShortNames: []string{"ev"},
		PrinterColumns: []model.PrinterColumn{
			model.ComputedColumn("Last Seen", event["lastTimestamp"], 0),
			model.PathColumn("Type", event["type"], 0, ".type"),
			model.PathColumn("Reason", event["reason"], 0, ".reason"),
			model.ComputedColumn("Object", event["involvedObject"], 0),
			model.PathColumn("Subobject", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"], 1, ".involvedObject.fieldPath"),
			model.ComputedColumn("Source", event["source"], 1),
			model.PathColumn("Message", event["message"], 0, ".message"),
			model.ComputedColumn("First Seen", event["firstTimestamp"], 1),
			{Name: "Count", Type: "integer", Description: event["count"], Priority: 1, JSONPath: ".count"},
			{Name: "Name", Type: "string", Format: "name", Description: model.ObjectMetaDoc("name"), Priority: 1, JSONPath: ".metadata.name"},
		},
		GoType:     obj,
		ListGoType: list,
	}
}

// pathSegmentName is the name rule of kube's Event store, which checks names as path segments only;
// events.k8s.io's strict validation then asks for a DNS subdomain.
func pathSegmentName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// fieldSelectors are the core Event's (kube's event strategy's ToSelectableFields), which
// events.k8s.io/v1 selectors map onto through its field labels (storedForm).
func fieldSelectors() *kinds.FieldSelectors {
	return &kinds.FieldSelectors{
		Names: []string{"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
			"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "source", "type"},
		New: func() kinds.FieldReading { return new(reading) },
	}
}

// reading is what a stored core Event is selected by.
type reading struct {
	kinds.SelectableMeta
	InvolvedObject struct {
		Kind            string `json:"kind"`
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		UID             string `json:"uid"`
		APIVersion      string `json:"apiVersion"`
		ResourceVersion string `json:"resourceVersion"`
		FieldPath       string `json:"fieldPath"`
	} `json:"involvedObject"`
	Reason string `json:"reason"`
	Source struct {
		Component string `json:"component"`
	} `json:"source"`
	ReportingComponent string `json:"reportingComponent"`
	Type               string `json:"type"`
}

func (r *reading) AddFields(set fields.Set) {
	set["involvedObject.kind"] = r.InvolvedObject.Kind
	set["involvedObject.namespace"] = r.InvolvedObject.Namespace
	set["involvedObject.name"] = r.InvolvedObject.Name
	set["involvedObject.uid"] = r.InvolvedObject.UID
	set["involvedObject.apiVersion"] = r.InvolvedObject.APIVersion
	set["involvedObject.resourceVersion"] = r.InvolvedObject.ResourceVersion
	set["involvedObject.fieldPath"] = r.InvolvedObject.FieldPath
	set["reason"] = r.Reason
	set["reportingComponent"] = r.ReportingComponent
	// Events of the newer API have no source: kube selects them by their reporting controller.
	set["source"] = r.Source.Component
	if set["source"] == "" {
		set["source"] = r.ReportingComponent
	}
	set["type"] = r.Type
}
