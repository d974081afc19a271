package events

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
)

// table is kube's Event printer.
func table() *kinds.Table {
	return &kinds.Table{Columns: columns(), Cells: printers.Typed(cells)}
}

// eventsV1Table prints events.k8s.io events with the core printer, as the core events they are
// stored as.
func eventsV1Table() *kinds.Table {
	return &kinds.Table{Columns: columns(), Cells: printers.Typed(func(e *eventsv1.Event, now time.Time) []any { return cells(ToCore(e), now) })}
}

func columns() []metav1.TableColumnDefinition {
	doc := corev1.Event{}.SwaggerDoc()
	return []metav1.TableColumnDefinition{
		printers.Column("Last Seen", doc["lastTimestamp"]),
		printers.Column("Type", doc["type"]),
		printers.Column("Reason", doc["reason"]),
		printers.Column("Object", doc["involvedObject"]),
		printers.Wide(printers.Column("Subobject", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"])),
		printers.Wide(printers.Column("Source", doc["source"])),
		printers.Column("Message", doc["message"]),
		printers.Wide(printers.Column("First Seen", doc["firstTimestamp"])),
		printers.Wide(printers.Column("Count", doc["count"])),
		printers.Wide(printers.NameColumn()),
	}
}

// cells follow kube's event printer: events of the newer API have no first and last timestamp
// but an eventTime, and a series instead of a count; a singleton has count 1.
func cells(e *corev1.Event, now time.Time) []any {
	first := printers.Age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = printers.MicroAge(e.EventTime, now)
	}
	last := printers.Age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = printers.MicroAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []any{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}

// eventSource is "component, host", taken from the reporting controller and instance when the
// older source fields are empty; without a host it is the component alone.
func eventSource(e *corev1.Event) string {
	component := firstNonEmpty(e.Source.Component, e.ReportingController)
	instance := firstNonEmpty(e.Source.Host, e.ReportingInstance)
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// firstNonEmpty returns the first of a and b that is not empty.
func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
