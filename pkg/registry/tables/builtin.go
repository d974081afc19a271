package tables

import (
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
// clients hide the priority 1 columns unless asked for -o wide. Roles and cluster roles have no
// printer in kube; they get its default convertor.
func builtinPrinter(gk schema.GroupKind) (printer, bool) {
	switch gk {
	case schema.GroupKind{Kind: "ConfigMap"}:
		return printer{columns: []metav1.TableColumnDefinition{
			nameColumn(), column("Data", corev1.ConfigMap{}.SwaggerDoc()["data"]), ageColumn(),
		}, cells: typed(configMapCells)}, true
	case schema.GroupKind{Kind: "Secret"}:
		doc := corev1.Secret{}.SwaggerDoc()
		return printer{columns: []metav1.TableColumnDefinition{
			nameColumn(), column("Type", doc["type"]), column("Data", doc["data"]), ageColumn(),
		}, cells: typed(secretCells)}, true
	case schema.GroupKind{Kind: "Namespace"}:
		return printer{columns: []metav1.TableColumnDefinition{
			nameColumn(), column("Status", "The status of the namespace"), ageColumn(),
		}, cells: typed(namespaceCells)}, true
	case schema.GroupKind{Kind: "ServiceAccount"}:
		return printer{columns: []metav1.TableColumnDefinition{
			nameColumn(), ageColumn(),
		}, cells: typed(serviceAccountCells)}, true
	case schema.GroupKind{Kind: "Event"}:
		return eventPrinter(), true
	case schema.GroupKind{Group: eventsv1.GroupName, Kind: "Event"}:
		// kube prints events.k8s.io events with the core printer, as the core events they are stored as.
		p := eventPrinter()
		p.cells = typed(func(e *eventsv1.Event, now time.Time) []any { return eventCells(registry.EventToCore(e), now) })
		return p, true
	case schema.GroupKind{Group: coordinationv1.GroupName, Kind: "Lease"}:
		return printer{columns: []metav1.TableColumnDefinition{
			nameColumn(), column("Holder", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]), ageColumn(),
		}, cells: typed(leaseCells)}, true
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}:
		return bindingPrinter(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding", typed(roleBindingCells)), true
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:
		return bindingPrinter(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding", typed(clusterRoleBindingCells)), true
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}, schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}:
		return defaultPrinter(), true
	case schema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:
		return crdPrinter(), true
	case schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}:
		return apiServicePrinter(), true
	case schema.GroupKind{Kind: "Service"}:
		return servicePrinter(), true
	case schema.GroupKind{Kind: "Endpoints"}:
		return endpointsPrinter(), true
	case schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:
		return endpointSlicePrinter(), true
	}
	if gk.Group == "admissionregistration.k8s.io" {
		return admissionRegistrationPrinter(gk.Kind)
	}
	return printer{}, false
}

// defaultPrinter is kube's default table convertor, for resources nobody wrote a printer for: the
// name and the creation time in RFC 3339, UTC.
func defaultPrinter() printer {
	return printer{
		columns: []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "Created At", Type: "date", Description: objectMetaDoc("creationTimestamp")},
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
		column("Last Seen", doc["lastTimestamp"]),
		column("Type", doc["type"]),
		column("Reason", doc["reason"]),
		column("Object", doc["involvedObject"]),
		wide(column("Subobject", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"])),
		wide(column("Source", doc["source"])),
		column("Message", doc["message"]),
		wide(column("First Seen", doc["firstTimestamp"])),
		wide(column("Count", doc["count"])),
		wide(nameColumn()),
	}, cells: typed(eventCells)}
}

// bindingPrinter prints role bindings; kind names the binding in the descriptions of the subject
// columns, as kube words them.
func bindingPrinter(roleRefDoc, kind string, cells cellFunc) printer {
	return printer{columns: []metav1.TableColumnDefinition{
		nameColumn(),
		column("Role", roleRefDoc),
		ageColumn(),
		wide(column("Users", "Users in the "+kind)),
		wide(column("Groups", "Groups in the "+kind)),
		wide(column("ServiceAccounts", "ServiceAccounts in the "+kind)),
	}, cells: cells}
}

func objectMetaDoc(field string) string { return metav1.ObjectMeta{}.SwaggerDoc()[field] }

func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc("name")}
}

// ageColumn holds an age already rendered as text, so kube types it string, not date.
func ageColumn() metav1.TableColumnDefinition {
	return column("Age", objectMetaDoc("creationTimestamp"))
}

func column(name, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: description}
}

// wide marks a column that kubectl shows only with -o wide.
func wide(c metav1.TableColumnDefinition) metav1.TableColumnDefinition {
	c.Priority = 1
	return c
}

// typed adapts the cells of a k8s.io/api type to any object of the kind: a pointer to the type, or
// an Unstructured holding one, which is converted first.
func typed[T any, PT interface {
	*T
	runtime.Object
}](cells func(PT, time.Time) []any) cellFunc {
	return func(obj runtime.Object, _ metav1.Object, now time.Time) ([]any, error) {
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

func configMapCells(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
}

func secretCells(s *corev1.Secret, now time.Time) []any {
	return []any{s.Name, string(s.Type), int64(secretKeys(s)), age(s.CreationTimestamp, now)}
}

// secretKeys counts the keys of data and stringData together: kube prints the internal object, in
// which stringData has been merged into data.
func secretKeys(s *corev1.Secret) int {
	n := len(s.Data)
	for k := range s.StringData {
		if _, ok := s.Data[k]; !ok {
			n++
		}
	}
	return n
}

func namespaceCells(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
}

func serviceAccountCells(sa *corev1.ServiceAccount, now time.Time) []any {
	// kube 1.37 prints no Secrets column: a ServiceAccount's secrets are a legacy token mechanism.
	return []any{sa.Name, age(sa.CreationTimestamp, now)}
}

func leaseCells(l *coordinationv1.Lease, now time.Time) []any {
	var holder string
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{l.Name, holder, age(l.CreationTimestamp, now)}
}

// eventCells follow kube's event printer: events of the newer API have no first and last timestamp
// but an eventTime, and a series instead of a count; a singleton has count 1.
func eventCells(e *corev1.Event, now time.Time) []any {
	first := age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
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

func roleBindingCells(rb *rbacv1.RoleBinding, now time.Time) []any {
	return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now)
}

func clusterRoleBindingCells(rb *rbacv1.ClusterRoleBinding, now time.Time) []any {
	return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now)
}

// bindingCells print the role as Kind/name and the subjects by kind, service accounts as
// namespace/name; subjects of other kinds are not shown.
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return []any{
		name, ref.Kind + "/" + ref.Name, age(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}
}
