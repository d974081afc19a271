// Package printers holds what kube's server-side printers (k8s.io/kubernetes
// pkg/printers/internalversion) share: the Name and Age columns, wide columns, ages in kube's short
// human form, and the adapter from a k8s.io/api type's cells to any object of the kind. A kind's
// package builds its kinds.Table with them; pkg/registry/tables uses them for the kinds not yet in a
// package of their own.
package printers

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ObjectMetaDoc is the description kube gives a field of ObjectMeta.
func ObjectMetaDoc(field string) string { return metav1.ObjectMeta{}.SwaggerDoc()[field] }

// NameColumn heads every printer's table.
func NameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: ObjectMetaDoc("name")}
}

// AgeColumn holds an age already rendered as text, so kube types it string, not date.
func AgeColumn() metav1.TableColumnDefinition {
	return Column("Age", ObjectMetaDoc("creationTimestamp"))
}

// Column is a string column.
func Column(name, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: description}
}

// Wide marks a column that kubectl shows only with -o wide.
func Wide(c metav1.TableColumnDefinition) metav1.TableColumnDefinition {
	c.Priority = 1
	return c
}

// Age is how long ago t was, in kube's short human form (45s, 5m30s, 3h2m, 2d, 3y45d), measured to
// now; a zero time is <unknown> and a time more than a second ahead of now is <invalid>.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// MicroAge is Age for the microsecond times of events.
func MicroAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// Typed adapts the cells of a k8s.io/api type to any object of the kind: a pointer to the type, or an
// Unstructured holding one, which is converted first.
func Typed[T any, PT interface {
	*T
	runtime.Object
}](cells func(PT, time.Time) []any) func(runtime.Object, time.Time) ([]any, error) {
	return func(obj runtime.Object, now time.Time) ([]any, error) {
		switch o := obj.(type) {
		case PT:
			return cells(o, now), nil
		case runtime.Unstructured:
			var t T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), &t); err != nil {
				return nil, fmt.Errorf("reading it as a %T: %w", PT(nil), err)
			}
			return cells(&t, now), nil
		}
		return nil, fmt.Errorf("a %T is not a %T", obj, PT(nil))
	}
}

// MaxListed is how many endpoints or ports kube's printers list before "+ N more...".
const MaxListed = 3

// ListWithMore is kube's listWithMoreString: the first three, "+ N more...", or <unset>.
func ListWithMore(list []string) string {
	if len(list) > MaxListed {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:MaxListed], ","), len(list)-MaxListed)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}
