package routes

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// manyCRDs declares n namespaced CRDs with status and scale, ten to a group.
func manyCRDs(n int) []CRD {
	crds := make([]CRD, n)
	for i := range crds {
		group := fmt.Sprintf("group%d.example.com", i/10)
		plural := fmt.Sprintf("widget%ds", i)
		crds[i] = CRD{File: "bench.yaml", Document: i + 1, Line: 1, Item: -1, Definition: &apiextensionsv1.CustomResourceDefinition{
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: group,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: fmt.Sprintf("widget%d", i),
					Kind: fmt.Sprintf("Widget%d", i), ListKind: fmt.Sprintf("Widget%dList", i)},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}},
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
						Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}}}},
			},
		}}
		crds[i].Definition.Name = plural + "." + group
	}
	return crds
}

// BenchmarkInstall1000CRDs computes the route table of the built-in API plus 1,000 CRDs.
func BenchmarkInstall1000CRDs(b *testing.B) {
	api, err := Builtin().WithCRDs(manyCRDs(1000))
	if err != nil {
		b.Fatal(err)
	}
	if n := len(Install(api, InstallOptions{}).Routes); n < 17000 {
		b.Fatalf("only %d routes", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		Install(api, InstallOptions{})
	}
}

// BenchmarkWithCRDs adds 1,000 decoded CRDs to the built-in API (collision checks included).
func BenchmarkWithCRDs(b *testing.B) {
	crds := manyCRDs(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Builtin().WithCRDs(crds); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewMatcher1000CRDs builds the matcher of the 1,000-CRD table, once per server start.
func BenchmarkNewMatcher1000CRDs(b *testing.B) {
	api, err := Builtin().WithCRDs(manyCRDs(1000))
	if err != nil {
		b.Fatal(err)
	}
	t := Install(api, InstallOptions{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewMatcher(t); err != nil {
			b.Fatal(err)
		}
	}
}
