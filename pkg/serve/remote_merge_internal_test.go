package serve

import (
	"encoding/json"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestMergeV2SharedDefinitionWithoutKind is the panic an extension server's OpenAPI caused once
// apictl's definitions became kube's to the byte: a definition both specs have alike, the remote's
// with x-kubernetes-group-version-kind and the local one with no extension at all.
func TestMergeV2SharedDefinitionWithoutKind(t *testing.T) {
	local := &spec.Swagger{SwaggerProps: spec.SwaggerProps{Definitions: spec.Definitions{
		"io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}},
	}}}
	remote := `{"swagger":"2.0","info":{"title":"wardle","version":"v0"},"paths":{"/apis/wardle.example.com/":{"get":{"operationId":"getWardleAPIGroup",
		"responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup"}}}}}},"definitions":{
		"io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup":{"type":"object","x-kubernetes-group-version-kind":[{"group":"","kind":"APIGroup","version":"v1"}]}}}`
	o := &remoteOpenAPI{v2: []*RemoteGroupVersion{{Group: "wardle.example.com", Version: "v1alpha1", OpenAPIV2: []byte(remote)}}}
	if err := o.mergeV2(local); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(local.Definitions["io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup"])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","x-kubernetes-group-version-kind":[{"group":"","kind":"APIGroup","version":"v1"}]}`; string(got) != want {
		t.Errorf("merged definition %s, want %s", got, want)
	}
}
