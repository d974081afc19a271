package customresourcedefinitions

import (
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// cells: creation time in RFC 3339, UTC, as kube's convertor writes it (not an age).
func cells(crd *apiextensionsv1.CustomResourceDefinition, _ time.Time) []any {
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
		established(crd),
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
