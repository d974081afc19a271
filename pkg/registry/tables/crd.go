package tables

import (
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds/printers"
)

// crdPrinter is apiextensions-apiserver's table convertor for CustomResourceDefinitions
// (pkg/registry/customresourcedefinition/tableconvertor): the served versions, the storage one
// marked, and in -o wide the group, kind, short names and whether the CRD is Established.
func crdPrinter() printer {
	return printer{
		columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.Column("Scope", "Cluster/Namespaced"),
			printers.Column("Versions", "Served versions"),
			{Name: "Created At", Type: "date", Description: printers.ObjectMetaDoc("creationTimestamp")},
			printers.Wide(printers.Column("Group", "API group")),
			printers.Wide(printers.Column("Kind", "CustomResource kind")),
			printers.Wide(printers.Column("ShortNames", "Short names")),
			printers.Wide(metav1.TableColumnDefinition{Name: "Established", Type: "boolean", Description: "Established status"}),
		},
		cells:     typed(crdCells),
		nullEmpty: true,
	}
}

// crdCells: creation time in RFC 3339, UTC, as kube's convertor writes it (not an age).
func crdCells(crd *apiextensionsv1.CustomResourceDefinition, _ time.Time) []any {
	var versions []string
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		label := v.Name
		if v.Storage {
			label += "(storage)"
		}
		versions = append(versions, label)
	}
	slices.Sort(versions)
	return []any{
		crd.Name,
		string(crd.Spec.Scope),
		strings.Join(versions, ","),
		crd.CreationTimestamp.UTC().Format(time.RFC3339),
		crd.Spec.Group,
		crd.Spec.Names.Kind,
		strings.Join(crd.Spec.Names.ShortNames, ","),
		crdEstablished(crd),
	}
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
