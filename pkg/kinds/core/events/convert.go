// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/events/v1/conversion.go (the conversions between
// events.k8s.io/v1 and core Events, and its field label conversion).

package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
)

// ToCore converts an events.k8s.io/v1 Event to the core v1 Event it is stored as, with kube's
// field mapping: regarding is involvedObject, note is message, the deprecated fields are the older
// API's, reportingController is reportingComponent. The result shares no memory with e.
func ToCore(e *eventsv1.Event) *corev1.Event {
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

// FromCore converts a stored core v1 Event to events.k8s.io/v1, the inverse of ToCore.
func FromCore(e *corev1.Event) *eventsv1.Event {
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

// storedForm stores events.k8s.io/v1 Events as core v1 Events.
func storedForm() *kinds.StoredForm {
	return &kinds.StoredForm{
		Resource: corev1.SchemeGroupVersion.WithResource("events"),
		GVK:      corev1.SchemeGroupVersion.WithKind("Event"),
		New:      func() runtime.Object { return &corev1.Event{} },
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
			return ToCore(e), nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*corev1.Event)
			if !ok {
				return nil, fmt.Errorf("reading a stored %T as an events.k8s.io Event", obj)
			}
			return FromCore(e), nil
		},
	}
}

// Convert converts an Event of one API into out, an Event of the other (or of the same), as kube
// converts between them through its internal Event: for admission webhooks and policies that match
// the other API's events (matchPolicy Equivalent).
func Convert(in, out runtime.Object) error {
	switch i := in.(type) {
	case *eventsv1.Event:
		switch o := out.(type) {
		case *corev1.Event:
			*o = *ToCore(i)
			return nil
		case *eventsv1.Event:
			*o = *i.DeepCopy()
			return nil
		}
	case *corev1.Event:
		switch o := out.(type) {
		case *eventsv1.Event:
			*o = *FromCore(i)
			return nil
		case *corev1.Event:
			*o = *i.DeepCopy()
			return nil
		}
	}
	return fmt.Errorf("converting %T to %T: not an Event of either API", in, out)
}
