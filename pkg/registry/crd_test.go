package registry

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The messages below are kube-apiserver v1.37.2's answers to the same bodies.

const validCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gizmos.diff.example.com","labels":{"diff":"crds"}},
"spec":{"group":"diff.example.com","scope":"Namespaced","names":{"plural":"gizmos","kind":"Gizmo"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
  "properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":1}}}}}}}]},
"status":{"storedVersions":["bogus"],"conditions":[{"type":"Established","status":"True"}]}}`

// Several problems at once, two of them making the schema non-structural.
const invalidCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"wrong.diff.example.com"},
"spec":{"group":"diff.example.com","scope":"Global","names":{"plural":"bads","kind":"Bad","shortNames":["B!"]},
"versions":[
 {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"properties":{"size":{"type":"integer"}}},
   "data":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}}}}},
 {"name":"V2","served":true,"storage":false}]}}`

const dns1035 = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`

const invalidCRDMessage = `CustomResourceDefinition.apiextensions.k8s.io "wrong.diff.example.com" is invalid: [` +
	`metadata.name: Invalid value: "wrong.diff.example.com": must be spec.names.plural+"."+spec.group, ` +
	`spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced", ` +
	`spec.versions[1].schema.openAPIV3Schema: Required value, ` +
	`spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields, ` +
	`spec.versions[0].schema.openAPIV3Schema.properties[data].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive, ` +
	`spec.versions[1].name: Invalid value: "V2": ` + dns1035 + `, ` +
	`spec.names.shortNames[0]: Invalid value: "B!": ` + dns1035 + `]`

// A CEL rule over its cost budget and a messageExpression that does not compile.
const costlyCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"costlies.diff.example.com"},
"spec":{"group":"diff.example.com","scope":"Namespaced","names":{"plural":"costlies","kind":"Costly"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"list":{"type":"array","items":{"type":"string"},
     "x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x == y))"},{"rule":"self.size() > 0","messageExpression":"'bad: ' + 1"}]}}}}}}}]}}`

const costlyCRDMessage = `CustomResourceDefinition.apiextensions.k8s.io "costlies.diff.example.com" is invalid: [` +
	`spec.validation.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared), ` +
	`spec.validation.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[1].messageExpression: Invalid value: {"Rule":"self.size() \u003e 0","Message":"","MessageExpression":"'bad: ' + 1","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression compilation failed: ERROR: <input>:1:9: found no matching overload for '_+_' applied to '(string, int)'
 | 'bad: ' + 1
 | ........^, ` +
	`spec.validation.openAPIV3Schema.properties[spec].properties[list].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema, ` +
	`spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)]`

// decodeCRD reads body as a create or update request's body is read: decoded, then defaulted.
func decodeCRD(t *testing.T, s *Strategy, body string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal([]byte(body), crd); err != nil {
		t.Fatal(err)
	}
	s.Default(crd)
	return crd
}

// createCRD runs a create's rules and returns the stored object, or the validation error.
func createCRD(t *testing.T, s *Strategy, body string) (*apiextensionsv1.CustomResourceDefinition, error) {
	t.Helper()
	crd := decodeCRD(t, s, body)
	if err := s.PrepareForCreate(crd, time.Date(2026, 11, 26, 3, 37, 41, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return crd, s.ValidateCreate(crd)
}

func TestCRDCreate(t *testing.T) {
	s := strategy(t, "apiextensions.k8s.io", "customresourcedefinitions")
	tests := []struct {
		name, body, want string
	}{
		{"valid", validCRD, ""},
		{"several problems, non-structural schema", invalidCRD, invalidCRDMessage},
		{"CEL over budget", costlyCRD, costlyCRDMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := createCRD(t, s, tt.body)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid CRD refused: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("error %v, want 422 Invalid", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("message\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestCRDCreateRules: defaults as kube's decoder applies them, status reset but for the storage
// version, generation 1.
func TestCRDCreateRules(t *testing.T) {
	s := strategy(t, "apiextensions.k8s.io", "customresourcedefinitions")
	crd, err := createCRD(t, s, validCRD)
	if err != nil {
		t.Fatal(err)
	}
	if crd.Generation != 1 {
		t.Errorf("generation %d, want 1", crd.Generation)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("conversion %+v, want strategy None", crd.Spec.Conversion)
	}
	if n := crd.Spec.Names; n.Singular != "gizmo" || n.ListKind != "GizmoList" {
		t.Errorf("names %+v, want singular gizmo and listKind GizmoList", n)
	}
	if st := crd.Status; len(st.Conditions) != 0 || !slices.Equal(st.StoredVersions, []string{"v1"}) || st.AcceptedNames.Plural != "" {
		t.Errorf("status %+v, want only storedVersions [v1]", st)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.APIVersion != "apiextensions.k8s.io/v1" {
		t.Errorf("type meta %+v", crd.TypeMeta)
	}
	if crd.UID == "" || crd.CreationTimestamp.IsZero() {
		t.Errorf("metadata %+v", crd.ObjectMeta)
	}
}

// stored is a created CRD as the controller leaves it: Established, names accepted.
func stored(t *testing.T, s *Strategy) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := createCRD(t, s, validCRD)
	if err != nil {
		t.Fatal(err)
	}
	crd.ResourceVersion = "10"
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted"},
	}
	return crd
}

func TestCRDUpdate(t *testing.T) {
	s := strategy(t, "apiextensions.k8s.io", "customresourcedefinitions")
	tests := []struct {
		name           string
		edit           func(*apiextensionsv1.CustomResourceDefinition)
		wantGeneration int64
		want           string
	}{
		{"labels only", func(c *apiextensionsv1.CustomResourceDefinition) { c.Labels["more"] = "x" }, 1, ""},
		{"status is the stored one", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.Conditions = nil
			c.Status.StoredVersions = []string{"v9"}
		}, 1, ""},
		{"spec change", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = []string{"gz"} }, 2, ""},
		{"scope is immutable", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.ClusterScoped }, 2,
			`CustomResourceDefinition.apiextensions.k8s.io "gizmos.diff.example.com" is invalid: spec.scope: Invalid value: "Cluster": field is immutable`},
		{"names are immutable once Established", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Kind = "Widget" }, 2,
			`CustomResourceDefinition.apiextensions.k8s.io "gizmos.diff.example.com" is invalid: spec.names.kind: Invalid value: "Widget": field is immutable`},
		{"the storage version cannot leave spec.versions", func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions[0].Name = "v2" }, 2,
			`CustomResourceDefinition.apiextensions.k8s.io "gizmos.diff.example.com" is invalid: status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := stored(t, s)
			obj := old.DeepCopy()
			tt.edit(obj)
			if err := s.PrepareForUpdate(obj, old); err != nil {
				t.Fatal(err)
			}
			if obj.Generation != tt.wantGeneration {
				t.Errorf("generation %d, want %d", obj.Generation, tt.wantGeneration)
			}
			if len(obj.Status.Conditions) != 1 || !slices.Contains(obj.Status.StoredVersions, "v1") {
				t.Errorf("status %+v, want the stored one", obj.Status)
			}
			err := s.ValidateUpdate(obj, old)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("update refused: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestCRDStatusUpdate(t *testing.T) {
	s := strategy(t, "apiextensions.k8s.io", "customresourcedefinitions")
	old := stored(t, s)
	obj := old.DeepCopy()
	obj.Spec.Names.ShortNames = []string{"gz"}
	obj.Labels["added"] = "bystatus"
	obj.Generation = 7
	obj.Status.Conditions[0].Message = "changed"
	obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "test", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}

	out := s.PrepareForStatusUpdate(obj, old).(*apiextensionsv1.CustomResourceDefinition)
	if err := s.ValidateStatusUpdate(out, old); err != nil {
		t.Fatal(err)
	}
	if len(out.Spec.Names.ShortNames) != 0 {
		t.Errorf("spec changed through status: %+v", out.Spec.Names)
	}
	if out.Status.Conditions[0].Message != "changed" {
		t.Errorf("status %+v not written", out.Status)
	}
	// kube's CRD status strategy keeps the request's metadata (kubernetes/kubernetes#137681): a
	// label written through /status sticks; generation stays the server's.
	if out.Labels["added"] != "bystatus" || out.Generation != 1 || out.UID != old.UID {
		t.Errorf("metadata %+v", out.ObjectMeta)
	}
	if len(out.ManagedFields) != 1 || out.ManagedFields[0].Manager != "test" {
		t.Errorf("managedFields %+v", out.ManagedFields)
	}

	bad := old.DeepCopy()
	bad.Status.AcceptedNames.Plural = "Bad!"
	out = s.PrepareForStatusUpdate(bad, old).(*apiextensionsv1.CustomResourceDefinition)
	want := `CustomResourceDefinition.apiextensions.k8s.io "gizmos.diff.example.com" is invalid: status.acceptedNames.plural: Invalid value: "Bad!": ` + dns1035
	if err := s.ValidateStatusUpdate(out, old); err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}
