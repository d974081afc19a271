// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/events.go and
// pkg/apis/events/v1/conversion.go.

package registry

import (
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube's limits on the strings of events of the newer API (pkg/apis/core/validation/events.go).
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// EventToCore converts an events.k8s.io/v1 Event to the core v1 Event it is stored as, with kube's
// field mapping: regarding is involvedObject, note is message, the deprecated fields are the older
// API's, reportingController is reportingComponent. The result shares no memory with e.
func EventToCore(e *eventsv1.Event) *corev1.Event {
	e = e.DeepCopy()
	out := &corev1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// EventFromCore converts a stored core v1 Event to events.k8s.io/v1, the inverse of EventToCore.
func EventFromCore(e *corev1.Event) *eventsv1.Event {
	e = e.DeepCopy()
	out := &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: eventsv1.SchemeGroupVersion.String(), Kind: "Event"},
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// StoredForm is how a resource whose objects are another's (Resource.StoredAs) reads and writes them:
// the stored kind, and the conversions between the served and the stored Go types.
type StoredForm struct {
	// GVK is the kind the objects are stored as.
	GVK schema.GroupVersionKind
	// New returns an empty stored object.
	New func() runtime.Object
	// FieldLabels maps the fields a list or watch of the served kind may select by to the stored kind's
	// (kube's field label conversion); a field not in it is not supported.
	FieldLabels map[string]string
	// ToStored converts a served object to its stored form; FromStored converts back. Neither
	// modifies its argument.
	ToStored   func(runtime.Object) (runtime.Object, error)
	FromStored func(runtime.Object) (runtime.Object, error)
}

// eventsStoredForm stores events.k8s.io/v1 Events as core v1 Events.
func eventsStoredForm() *StoredForm {
	return &StoredForm{
		GVK: corev1.SchemeGroupVersion.WithKind("Event"),
		New: func() runtime.Object { return &corev1.Event{} },
		// kube's field label conversion of events.k8s.io/v1 Events (pkg/apis/events/v1/conversion.go).
		FieldLabels: map[string]string{
			"reason":                    "reason",
			"regarding.kind":            "involvedObject.kind",
			"regarding.namespace":       "involvedObject.namespace",
			"regarding.name":            "involvedObject.name",
			"regarding.uid":             "involvedObject.uid",
			"regarding.apiVersion":      "involvedObject.apiVersion",
			"regarding.resourceVersion": "involvedObject.resourceVersion",
			"regarding.fieldPath":       "involvedObject.fieldPath",
			"reportingController":       "reportingComponent",
			"type":                      "type",
			"metadata.namespace":        "metadata.namespace",
			"metadata.name":             "metadata.name",
		},
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*eventsv1.Event)
			if !ok {
				return nil, fmt.Errorf("storing a %T as a core Event", obj)
			}
			return EventToCore(e), nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*corev1.Event)
			if !ok {
				return nil, fmt.Errorf("reading a stored %T as an events.k8s.io Event", obj)
			}
			return EventFromCore(e), nil
		},
	}
}

// eventRules are kube's rules for events, which depend on the API a write comes through: through core
// v1 only the legacy checks apply (backwards compatibility), through events.k8s.io/v1 the strict ones
// too. Both validate the core form, so errors name the core fields (involvedObject, message, count),
// as kube's do. The kind's checks come before the generic metadata checks, which run only when they
// pass (kindFirst), as in kube's store.
type eventRules struct {
	noRules
	// strict is true for writes through events.k8s.io/v1.
	strict bool
}

func (eventRules) validatesKindFirst() {}

// coreEvent returns the core form of an event of either API; another kind is a handler bug, reported
// as an internal error rather than a panic.
func coreEvent(obj runtime.Object) (*corev1.Event, *field.Error) {
	switch e := obj.(type) {
	case *corev1.Event:
		return e, nil
	case *eventsv1.Event:
		return EventToCore(e), nil
	}
	return nil, field.InternalError(nil, fmt.Errorf("validating a %T as an Event", obj))
}

func (r eventRules) validate(obj runtime.Object) field.ErrorList {
	e, bad := coreEvent(obj)
	if bad != nil {
		return field.ErrorList{bad}
	}
	errs := r.legacy(e)
	if !r.strict {
		return errs
	}
	errs = append(errs, apivalidation.ValidateObjectMeta(&e.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, validateEventSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !e.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if e.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if e.Source.Component != "" || e.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

func (r eventRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	e, bad := coreEvent(obj)
	if bad != nil {
		return field.ErrorList{bad}
	}
	oldE, bad := coreEvent(old)
	if bad != nil {
		return field.ErrorList{bad}
	}
	errs := r.legacy(e)
	if !r.strict {
		return errs
	}
	errs = append(errs, apivalidation.ValidateObjectMetaUpdate(&e.ObjectMeta, &oldE.ObjectMeta, field.NewPath("metadata"))...)
	if !reflect.DeepEqual(e.Series, oldE.Series) {
		errs = append(errs, validateEventSeries(e)...)
	}
	immutable := func(path string, v, old any) {
		if !apiequality.Semantic.DeepEqual(v, old) {
			errs = append(errs, field.Invalid(field.NewPath(path), v, apivalidation.FieldImmutableErrorMsg))
		}
	}
	immutable("involvedObject", internalReference(&e.InvolvedObject), internalReference(&oldE.InvolvedObject))
	immutable("reason", e.Reason, oldE.Reason)
	immutable("message", e.Message, oldE.Message)
	immutable("source", internalSource(e.Source), internalSource(oldE.Source))
	immutable("firstTimestamp", e.FirstTimestamp, oldE.FirstTimestamp)
	immutable("lastTimestamp", e.LastTimestamp, oldE.LastTimestamp)
	immutable("count", e.Count, oldE.Count)
	immutable("type", e.Type, oldE.Type)
	// Changes below a microsecond are tolerated: clients that truncate the time when they serialize it
	// send it back so (kube issue 111928).
	if !e.EventTime.Truncate(time.Microsecond).UTC().Equal(oldE.EventTime.Truncate(time.Microsecond).UTC()) {
		immutable("eventTime", e.EventTime, oldE.EventTime)
	}
	immutable("action", e.Action, oldE.Action)
	immutable("related", internalReferencePtr(e.Related), internalReferencePtr(oldE.Related))
	immutable("reportingController", e.ReportingController, oldE.ReportingController)
	immutable("reportingInstance", e.ReportingInstance, oldE.ReportingInstance)
	return errs
}

// legacy are the checks every event passes, whichever API it comes through. Events of the older API
// (no eventTime) must be about an object of their namespace; the newer ones name their reporter,
// action and reason.
func (r eventRules) legacy(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	reportingController := field.NewPath("reportingController")
	if !r.strict {
		reportingController = field.NewPath("reportingComponent")
	}
	involvedNS := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		switch {
		case e.InvolvedObject.Namespace == "":
			// Or "default", for old clients.
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		case e.Namespace != e.InvolvedObject.Namespace:
			errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if e.ReportingController == "" {
		errs = append(errs, field.Required(reportingController, ""))
	}
	for _, msg := range utilvalidation.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(reportingController, e.ReportingController, msg))
	}
	if e.ReportingInstance == "" {
		errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
	}
	if len(e.ReportingInstance) > reportingInstanceLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", reportingInstanceLengthLimit)))
	}
	if e.Action == "" {
		errs = append(errs, field.Required(field.NewPath("action"), ""))
	}
	if len(e.Action) > actionLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", actionLengthLimit)))
	}
	if e.Reason == "" {
		errs = append(errs, field.Required(field.NewPath("reason"), ""))
	}
	if len(e.Reason) > reasonLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", reasonLengthLimit)))
	}
	if len(e.Message) > noteLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return errs
}

// validateEventSeries checks a series of the newer API: at least two occurrences, the last one's time.
func validateEventSeries(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if e.Series == nil {
		return errs
	}
	if e.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if e.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}

// objectReference and eventSource are kube's internal types, whose JSON (field names as in Go, nothing
// omitted) is how kube's "field is immutable" errors print the values of these fields.
type objectReference struct {
	Kind, Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath string
}

type eventSource struct{ Component, Host string }

func internalReference(r *corev1.ObjectReference) objectReference {
	return objectReference{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: string(r.UID),
		APIVersion: r.APIVersion, ResourceVersion: r.ResourceVersion, FieldPath: r.FieldPath}
}

func internalReferencePtr(r *corev1.ObjectReference) *objectReference {
	if r == nil {
		return nil
	}
	out := internalReference(r)
	return &out
}

func internalSource(s corev1.EventSource) eventSource {
	return eventSource{Component: s.Component, Host: s.Host}
}

// storedForm returns how objects of gvk are stored as the resource stored, the only pairing kube has
// among the kinds apictl serves being events.k8s.io/v1 Events stored as core v1 events.
func storedForm(gvk schema.GroupVersionKind, stored schema.GroupVersionResource) (*StoredForm, error) {
	if gvk == eventsv1.SchemeGroupVersion.WithKind("Event") && stored == corev1.SchemeGroupVersion.WithResource("events") {
		return eventsStoredForm(), nil
	}
	return nil, fmt.Errorf("%s cannot be stored as %s", gvk, stored)
}

// ConvertEvent converts an Event of one API into out, an Event of the other (or of the same), as kube
// converts between them through its internal Event: for admission webhooks and policies that match
// the other API's events (matchPolicy Equivalent).
func ConvertEvent(in, out runtime.Object) error {
	switch i := in.(type) {
	case *eventsv1.Event:
		switch o := out.(type) {
		case *corev1.Event:
			*o = *EventToCore(i)
			return nil
		case *eventsv1.Event:
			*o = *i.DeepCopy()
			return nil
		}
	case *corev1.Event:
		switch o := out.(type) {
		case *eventsv1.Event:
			*o = *EventFromCore(i)
			return nil
		case *corev1.Event:
			*o = *i.DeepCopy()
			return nil
		}
	}
	return fmt.Errorf("converting %T to %T: not an Event of either API", in, out)
}
