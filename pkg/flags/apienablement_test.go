package flags

import (
	"path/filepath"
	"strings"
	"testing"
)

// crdManifest is a minimal valid CRD of group example.com, or one without a kind.
func crdManifest(withKind bool) string {
	names := "{plural: widgets, kind: Widget}"
	if !withKind {
		names = "{plural: widgets}"
	}
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n" +
		"spec:\n  group: example.com\n  names: " + names + "\n  scope: Namespaced\n" +
		"  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
}

func TestAPIEnablementValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, crdManifest(true))
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "# two CRDs\n"+crdManifest(true)+"---\n"+strings.Replace(crdManifest(false), "widgets", "gadgets", 2))

	tests := []struct {
		name          string
		runtimeConfig map[string]string
		apiConfig     []string
		// want holds "flag value: substring of the message" per problem, in order.
		want []string
	}{
		{name: "nothing"},
		{name: "built-in group versions", runtimeConfig: map[string]string{"v1": "true", "rbac.authorization.k8s.io/v1": "false", "coordination.k8s.io/v1/leases": "false"}},
		{name: "unknown group versions", runtimeConfig: map[string]string{"apps/v1": "false", "coordination.k8s.io/v1beta1": "true", "v1/pods": "false"},
			want: []string{
				"runtime-config /v1/pods=false: names resource pods that v1 does not serve",
				"runtime-config apps/v1=false: has unknown api groups apps",
				"runtime-config coordination.k8s.io/v1beta1=true: names group version coordination.k8s.io/v1beta1 that has not been registered",
			}},
		{name: "crd group", runtimeConfig: map[string]string{"example.com/v1": "false"}, apiConfig: []string{good}},
		{name: "crd group without the crd", runtimeConfig: map[string]string{"example.com/v1": "false"},
			want: []string{"runtime-config example.com/v1=false: has unknown api groups example.com"}},
		{name: "malformed crd", runtimeConfig: map[string]string{"example.com/v1": "false"}, apiConfig: []string{bad},
			want: []string{"api-config " + bad + ": document 2 (line 12): spec.names.kind: Required value"}},
		{name: "missing file", apiConfig: []string{filepath.Join(dir, "nope")},
			want: []string{"api-config " + filepath.Join(dir, "nope") + ": does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewAPIEnablementOptions()
			o.RuntimeConfig, o.APIConfig = tt.runtimeConfig, tt.apiConfig
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			got := Problems(SectionAPIEnablement, o.Validate())
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), describeProblems(got))
			}
			for i, want := range tt.want {
				head, msg, _ := strings.Cut(want, ": ")
				flag, value, _ := strings.Cut(head, " ")
				if got[i].Flag != flag || got[i].Value != value || !strings.Contains(got[i].Message, msg) || got[i].Section != SectionAPIEnablement {
					t.Errorf("problem %d = %+v, want --%s %s ... %s", i, got[i], flag, value, msg)
				}
			}
		})
	}
}
