package tables

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/registry"
)

// printer is kube's way of printing one kind: its column definitions and the cells of a row.
type printer struct {
	columns   []metav1.TableColumnDefinition
	cells     cellFunc
	nullEmpty bool
}

// builtinPrinter returns kube's printer for a built-in kind this server serves. The columns, their
// types and descriptions, and the cells are those of kube's server-side printers
// (pkg/printers/internalversion), which the server always runs wide: every column has a cell, and
// clients hide the priority 1 columns unless asked for -o wide. A described kind without a printer
// (roles and cluster roles have none in kube) gets kube's default convertor.
func builtinPrinter(gk schema.GroupKind) (printer, bool) {
	if k, ok := kindsbuiltin.Lookup(gk); ok {
		if k.Table == nil {
			return defaultPrinter(), true
		}
		return printer{columns: k.Table.Columns, cells: fromKind(k.Table.Cells)}, true
	}
	switch gk {
	case schema.GroupKind{Kind: "Event"}:
		return eventPrinter(), true
	case schema.GroupKind{Group: eventsv1.GroupName, Kind: "Event"}:
		// kube prints events.k8s.io events with the core printer, as the core events they are stored as.
		p := eventPrinter()
		p.cells = typed(func(e *eventsv1.Event, now time.Time) []any { return eventCells(registry.EventToCore(e), now) })
		return p, true
	case schema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:
		return crdPrinter(), true
	}
	return printer{}, false
}

// defaultPrinter is kube's default table convertor, for resources nobody wrote a printer for: the
// name and the creation time in RFC 3339, UTC.
func defaultPrinter() printer {
	return printer{
		columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			{Name: "Created At", Type: "date", Description: printers.ObjectMetaDoc("creationTimestamp")},
		},
		cells: func(_ runtime.Object, m metav1.Object, _ time.Time) ([]any, error) {
			return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
		},
		nullEmpty: true,
	}
}

func eventPrinter() printer {
	doc := corev1.Event{}.SwaggerDoc()
	return printer{columns: []metav1.TableColumnDefinition{
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
	}, cells: typed(eventCells)}
}

// typed adapts the cells of a k8s.io/api type to the converter's cell function (printers.Typed).
func typed[T any, PT interface {
	*T
	runtime.Object
}](cells func(PT, time.Time) []any) cellFunc {
	return fromKind(printers.Typed(cells))
}

// fromKind adapts a kind's cell function (kinds.Table) to the converter's.
func fromKind(cells func(runtime.Object, time.Time) ([]any, error)) cellFunc {
	return func(obj runtime.Object, _ metav1.Object, now time.Time) ([]any, error) { return cells(obj, now) }
}

// eventCells follow kube's event printer: events of the newer API have no first and last timestamp
// but an eventTime, and a series instead of a count; a singleton has count 1.
func eventCells(e *corev1.Event, now time.Time) []any {
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
