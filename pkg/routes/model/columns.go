package model

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ObjectMetaDoc is the description kube gives a field of ObjectMeta.
func ObjectMetaDoc(field string) string { return metav1.ObjectMeta{}.SwaggerDoc()[field] }

// NameColumn is the first column of every table, as kube's printers and CRDs define it.
func NameColumn() PrinterColumn {
	return PrinterColumn{Name: "Name", Type: "string", Format: "name", Description: ObjectMetaDoc("name"), JSONPath: ".metadata.name"}
}

// AgeColumn shows creationTimestamp; its Type is date so that clients print it as an age.
func AgeColumn() PrinterColumn {
	return PrinterColumn{Name: "Age", Type: "date", Description: ObjectMetaDoc("creationTimestamp"), JSONPath: ".metadata.creationTimestamp"}
}

// CreatedAtColumn is the second column of kube's default table convertor, for kinds without a printer.
func CreatedAtColumn() PrinterColumn {
	return PrinterColumn{Name: "Created At", Type: "date", Description: ObjectMetaDoc("creationTimestamp"), JSONPath: ".metadata.creationTimestamp"}
}

// PathColumn is a string column read from the object at path.
func PathColumn(name, description string, priority int32, path string) PrinterColumn {
	return PrinterColumn{Name: name, Type: "string", Description: description, Priority: priority, JSONPath: path}
}

// ComputedColumn is a column kube's printers compute in code; it has no JSONPath.
func ComputedColumn(name, description string, priority int32) PrinterColumn {
	return PrinterColumn{Name: name, Type: "string", Description: description, Priority: priority}
}
