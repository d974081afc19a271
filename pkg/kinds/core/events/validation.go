// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/events.go (ValidateEventCreate,
// ValidateEventUpdate and legacyValidateEvent).

package events

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

// strategy is kube's for events, whose rules depend on the API a write comes through: through core
// v1 only the legacy checks apply (backwards compatibility), through events.k8s.io/v1 the strict ones
// too. Both validate the core form, so errors name the core fields (involvedObject, message, count),
// as kube's do. The kind's checks come before the generic metadata checks, which run only when they
// pass (kinds.KindFirstValidator), as in kube's store.
type strategy struct {
	// strict is true for writes through events.k8s.io/v1.
	strict bool
}

func (strategy) ValidatesKindFirst()                  {}
func (strategy) PrepareForCreate(runtime.Object)      {}
func (strategy) PrepareForUpdate(_, _ runtime.Object) {}

// coreEvent returns the core form of an event of either API; another kind is a handler bug, reported
// as an internal error rather than a panic.
func coreEvent(obj runtime.Object) (*corev1.Event, *field.Error) {
	switch e := obj.(type) {
	case *corev1.Event:
		return e, nil
	case *eventsv1.Event:
		return ToCore(e), nil
	}
	return nil, field.InternalError(nil, fmt.Errorf("validating a %T as an Event", obj))
}

func (r strategy) Validate(obj runtime.Object) field.ErrorList {
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

func (r strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
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
func (r strategy) legacy(e *corev1.Event) field.ErrorList {
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

// objectReference and internalEventSource are kube's internal types, whose JSON (field names as in Go, nothing
// omitted) is how kube's "field is immutable" errors print the values of these fields.
type objectReference struct {
	Kind, Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath string
}

type internalEventSource struct{ Component, Host string }

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

func internalSource(s corev1.EventSource) internalEventSource {
	return internalEventSource{Component: s.Component, Host: s.Host}
}
