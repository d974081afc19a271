package tables

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kindsbuiltin "github.com/apictl/apictl/pkg/kinds/builtin"
	"github.com/apictl/apictl/pkg/kinds/printers"
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
		return printer{columns: k.Table.Columns, cells: fromKind(k.Table.Cells), nullEmpty: k.Table.NullEmpty}, true
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

// fromKind adapts a kind's cell function (kinds.Table) to the converter's.
func fromKind(cells func(runtime.Object, time.Time) ([]any, error)) cellFunc {
	return func(obj runtime.Object, _ metav1.Object, now time.Time) ([]any, error) { return cells(obj, now) }
}
