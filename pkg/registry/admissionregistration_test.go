package registry

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const arGroup = "admissionregistration.k8s.io"

// decodeInto reads a YAML manifest into a new object of the resource, with the decoder's defaults.
func decodeInto(t *testing.T, s *Strategy, manifest string) runtime.Object {
	t.Helper()
	obj := s.New()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		t.Fatal(err)
	}
	s.Default(obj)
	return obj
}

// TestAdmissionRegistrationDefaults pins kube's v1 defaults, as the reference server answered the
// creates of test/differential/testdata/corpus/78-admissionregistration.yaml.
func TestAdmissionRegistrationDefaults(t *testing.T) {
	tests := []struct {
		resource, manifest string
		// want is the JSON of the defaulted part the test looks at.
		part func(runtime.Object) any
		want string
	}{
		{"validatingwebhookconfigurations", `
metadata: {name: v}
webhooks:
- name: a.v.example.com
  clientConfig: {service: {namespace: ns, name: hook}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]`,
			func(o runtime.Object) any {
				return o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0]
			},
			`{"name":"a.v.example.com","clientConfig":{"service":{"namespace":"ns","name":"hook","port":443}},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"],"scope":"*"}],"failurePolicy":"Fail","matchPolicy":"Equivalent","namespaceSelector":{},"objectSelector":{},"sideEffects":"None","timeoutSeconds":10,"admissionReviewVersions":["v1"]}`},
		{"mutatingwebhookconfigurations", `
metadata: {name: m}
webhooks:
- name: a.m.example.com
  clientConfig: {url: "https://hook.example.com"}
  failurePolicy: Ignore
  timeoutSeconds: 3
  sideEffects: None
  admissionReviewVersions: [v1]`,
			func(o runtime.Object) any {
				return o.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[0]
			},
			`{"name":"a.m.example.com","clientConfig":{"url":"https://hook.example.com"},"failurePolicy":"Ignore","matchPolicy":"Equivalent","namespaceSelector":{},"objectSelector":{},"sideEffects":"None","timeoutSeconds":3,"admissionReviewVersions":["v1"],"reinvocationPolicy":"Never"}`},
		{"validatingadmissionpolicies", `
metadata: {name: p}
spec:
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
  validations: [{expression: "true"}]`,
			func(o runtime.Object) any { return o.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec },
			`{"matchConstraints":{"namespaceSelector":{},"objectSelector":{},"resourceRules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"],"scope":"*"}],"matchPolicy":"Equivalent"},"validations":[{"expression":"true"}],"failurePolicy":"Fail"}`},
		{"validatingadmissionpolicybindings", `
metadata: {name: b}
spec: {policyName: p, validationActions: [Deny], matchResources: {excludeResourceRules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]}}`,
			func(o runtime.Object) any { return o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec },
			`{"policyName":"p","matchResources":{"namespaceSelector":{},"objectSelector":{},"excludeResourceRules":[{"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":["*"],"scope":"*"}],"matchPolicy":"Equivalent"},"validationActions":["Deny"]}`},
		{"mutatingadmissionpolicies", `
metadata: {name: m}
spec: {reinvocationPolicy: Never}`,
			func(o runtime.Object) any { return o.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec },
			`{"failurePolicy":"Fail","reinvocationPolicy":"Never"}`},
		{"mutatingadmissionpolicybindings", `
metadata: {name: b}
spec: {policyName: p}`,
			func(o runtime.Object) any { return o.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec },
			`{"policyName":"p"}`},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			s := strategy(t, arGroup, tt.resource)
			obj := decodeInto(t, s, tt.manifest)
			got, err := json.Marshal(tt.part(obj))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("defaulted\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestAdmissionRegistrationValidation checks kube's messages, every error at once, as the reference
// server answered them.
func TestAdmissionRegistrationValidation(t *testing.T) {
	tests := []struct {
		name, resource, manifest string
		// want is the whole message; "" means valid.
		want string
	}{
		{"valid webhook", "validatingwebhookconfigurations", `
metadata: {name: v.example.com}
webhooks:
- name: a.v.example.com
  clientConfig: {url: "https://hook.example.com/x"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1beta1]
  matchConditions: [{name: ns, expression: "request.namespace != 'kube-system'"}]`, ""},
		{"webhook problems", "validatingwebhookconfigurations", `
metadata: {name: w1}
webhooks:
- {name: a, clientConfig: {}}
- name: a.b.c
  clientConfig: {url: "http://u:p@x/?q#f", service: {name: svc, namespace: ns}}
  sideEffects: Some
  timeoutSeconds: 31
  admissionReviewVersions: [v2, v2]
  rules: [{operations: ["*", CREATE, X], apiGroups: [], apiVersions: ["*", v1], resources: ["*", pods, "*/*"], scope: Foo}]
  matchConditions: [{name: a, expression: "foo("}, {name: a, expression: "params.x"}]`,
			`ValidatingWebhookConfiguration.admissionregistration.k8s.io "w1" is invalid: [` +
				`webhooks[0].name: Invalid value: "a": should be a domain with at least three segments separated by dots, ` +
				`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, ` +
				`webhooks[0].clientConfig: Required value: exactly one of url or service is required, ` +
				`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1, ` +
				`webhooks[1].rules[0].operations: Invalid value: ["*","CREATE","X"]: if '*' is present, must not specify other operations, ` +
				`webhooks[1].rules[0].operations[2]: Unsupported value: "X": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE", ` +
				`webhooks[1].rules[0].apiGroups: Required value, ` +
				`webhooks[1].rules[0].apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions, ` +
				`webhooks[1].rules[0].resources: Invalid value: ["*","pods","*/*"]: if '*/*' is present, must not specify other resources, ` +
				`webhooks[1].rules[0].resources: Invalid value: ["*","pods","*/*"]: if '*' is present, must not specify other resources without subresources, ` +
				`webhooks[1].rules[0].scope: Unsupported value: "Foo": supported values: "*", "Cluster", "Namespaced", ` +
				`webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", ` +
				`webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, ` +
				`webhooks[1].clientConfig: Required value: exactly one of url or service is required, ` +
				"webhooks[1].matchConditions[0].expression: Invalid value: \"foo(\": compilation failed: ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | foo(\n | ....^, " +
				"webhooks[1].matchConditions[1].expression: Invalid value: \"params.x\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x\n | ^, " +
				`webhooks[1].matchConditions[1].name: Duplicate value: "a", ` +
				`webhooks[1].admissionReviewVersions[1]: Invalid value: "v2": duplicate version, ` +
				`webhooks[1].admissionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, v1beta1]`},
		{"reserved name", "mutatingwebhookconfigurations", `metadata: {name: m.static.k8s.io}`,
			`MutatingWebhookConfiguration.admissionregistration.k8s.io "m.static.k8s.io" is invalid: metadata.name: Invalid value: "m.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`},
		{"empty binding", "validatingadmissionpolicybindings", `{metadata: {name: b1}, spec: {}}`,
			`ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b1" is invalid: [spec.policyName: Required value, spec.validationActions: Required value]`},
		{"binding problems", "validatingadmissionpolicybindings", `
metadata: {name: b1.static.k8s.io}
spec: {policyName: p, validationActions: [Deny, Warn, Deny, Foo], paramRef: {name: x, selector: {}}}`,
			`ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b1.static.k8s.io" is invalid: [` +
				`spec.paramRef.name: Forbidden: name and selector are mutually exclusive, ` +
				`spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, ` +
				`spec.paramRef.parameterNotFoundAction: Required value, ` +
				`spec.validationActions[2]: Duplicate value: "Deny", ` +
				`spec.validationActions[3]: Unsupported value: "Foo": supported values: "Audit", "Deny", "Warn", ` +
				`spec.validationActions: Invalid value: ["Deny","Warn","Deny","Foo"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose), ` +
				`metadata.name: Invalid value: "b1.static.k8s.io": names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API]`},
		{"empty mutating binding", "mutatingadmissionpolicybindings", `{metadata: {name: b1}, spec: {}}`,
			`MutatingAdmissionPolicyBinding.admissionregistration.k8s.io "b1" is invalid: spec.policyName: Required value`},
		{"empty policy", "validatingadmissionpolicies", `{metadata: {name: p1}, spec: {}}`,
			`ValidatingAdmissionPolicy.admissionregistration.k8s.io "p1" is invalid: [spec.matchConstraints: Required value, ` +
				`spec.validations: Required value: validations or auditAnnotations must contain at least one item, ` +
				`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]`},
		{"policy with variables and params", "validatingadmissionpolicies", `
metadata: {name: p}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
  variables: [{name: nm, expression: "object.metadata.name"}]
  validations: [{expression: "variables.nm != params.data.forbidden", messageExpression: "'bad name ' + variables.nm"}]
  auditAnnotations: [{key: seen, valueExpression: "string(variables.nm)"}]`, ""},
		{"variable problems", "validatingadmissionpolicies", `
metadata: {name: p}
spec:
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
  variables: [{name: "in", expression: "1"}, {name: ok, expression: ""}]
  validations: [{expression: "'x'", message: "a\nb", reason: Gone}]`,
			`ValidatingAdmissionPolicy.admissionregistration.k8s.io "p" is invalid: [` +
				`spec.variables[0].name: Invalid value: "in": must be a valid CEL identifier, ` +
				`spec.variables[1].expression: Required value: expression is not specified, ` +
				"spec.validations[0].expression: Invalid value: \"'x'\": must evaluate to bool but got string, " +
				"spec.validations[0].message: Invalid value: \"a\\nb\": must not contain line breaks, " +
				`spec.validations[0].reason: Unsupported value: "Gone": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"]`},
		{"empty mutating policy", "mutatingadmissionpolicies", `{metadata: {name: p1}, spec: {}}`,
			`MutatingAdmissionPolicy.admissionregistration.k8s.io "p1" is invalid: [spec.matchConstraints: Required value, ` +
				`spec.mutations: Required value: mutations must contain at least one item, spec.reinvocationPolicy: Required value]`},
		{"mutating policy", "mutatingadmissionpolicies", `
metadata: {name: m}
spec:
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]}
  reinvocationPolicy: IfNeeded
  mutations:
  - {patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}}
  - {patchType: JSONPatch, jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/data/a', value: 'b'}]"}}`, ""},
		{"mutating policy problems", "mutatingadmissionpolicies", `
metadata: {name: m}
spec:
  matchConstraints: {resourceRules: [{operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]}
  reinvocationPolicy: Always
  mutations: [{patchType: JSONPatch, applyConfiguration: {expression: "Object{}"}}, {patchType: Merge}]`,
			`MutatingAdmissionPolicy.admissionregistration.k8s.io "m" is invalid: [` +
				`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE", ` +
				`spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch, ` +
				`spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch, ` +
				`spec.mutations[1].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch", ` +
				`spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy(t, arGroup, tt.resource)
			obj := decodeInto(t, s, tt.manifest)
			if err := s.PrepareForCreate(obj, time.Now()); err != nil {
				t.Fatal(err)
			}
			err := s.ValidateCreate(obj)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("no error, want %s", tt.want)
			case tt.want != "" && err.Error() != tt.want:
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

// TestAdmissionRegistrationUpdate: generation moves with the spec (the webhooks), status is kept on
// the main resource and is all a /status write changes, and an update tolerates what the stored
// object already had (sideEffects Some from v1beta1 days).
func TestAdmissionRegistrationUpdate(t *testing.T) {
	s := strategy(t, arGroup, "validatingadmissionpolicies")
	old := decodeInto(t, s, `
metadata: {name: p, labels: {a: b}, resourceVersion: "5"}
spec:
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}
  validations: [{expression: "true"}]`)
	if err := s.PrepareForCreate(old, time.Now()); err != nil {
		t.Fatal(err)
	}
	oldP := old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	oldP.Status.ObservedGeneration = 1
	if oldP.Generation != 1 {
		t.Errorf("generation %d after create, want 1", oldP.Generation)
	}

	labelsOnly := oldP.DeepCopy()
	labelsOnly.Labels = map[string]string{"a": "c"}
	labelsOnly.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 9}
	if err := s.PrepareForUpdate(labelsOnly, old); err != nil {
		t.Fatal(err)
	}
	if labelsOnly.Generation != 1 || labelsOnly.Status.ObservedGeneration != 1 {
		t.Errorf("a labels update gave generation %d, status %+v; want 1 and the stored status", labelsOnly.Generation, labelsOnly.Status)
	}

	specChange := oldP.DeepCopy()
	specChange.Spec.FailurePolicy = ptr(admissionregistrationv1.Ignore)
	if err := s.PrepareForUpdate(specChange, old); err != nil {
		t.Fatal(err)
	}
	if specChange.Generation != 2 {
		t.Errorf("a spec update gave generation %d, want 2", specChange.Generation)
	}

	statusWrite := oldP.DeepCopy()
	statusWrite.Labels = map[string]string{"via": "status"}
	statusWrite.Spec.FailurePolicy = ptr(admissionregistrationv1.Ignore)
	statusWrite.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: metav1.Now()}}
	stored := s.PrepareForStatusUpdate(statusWrite, old).(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if stored.Labels["a"] != "b" || *stored.Spec.FailurePolicy != admissionregistrationv1.Fail || len(stored.Status.Conditions) != 1 {
		t.Errorf("a /status write stored labels %v, failurePolicy %s, conditions %v; want the stored labels and spec and the new status",
			stored.Labels, *stored.Spec.FailurePolicy, stored.Status.Conditions)
	}
	bad := stored.DeepCopy()
	bad.ResourceVersion = "6"
	bad.Status.TypeChecking = &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec["}}}
	err := s.ValidateStatusUpdate(bad, old)
	const want = `is invalid: [status.typeChecking.expressionWarnings[0].warning: Required value, status.typeChecking.expressionWarnings[0].fieldRef: Invalid value: "spec[": invalid JSONPath: unterminated array]`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("status validation %v, want it to end %s", err, want)
	}

	hooks := strategy(t, arGroup, "mutatingwebhookconfigurations")
	legacy := decodeInto(t, hooks, `
metadata: {name: m, resourceVersion: "3"}
webhooks: [{name: a.m.example.com, clientConfig: {url: "https://x.example.com"}, sideEffects: Some, admissionReviewVersions: [v1]}]`)
	updated := legacy.DeepCopyObject().(*admissionregistrationv1.MutatingWebhookConfiguration)
	updated.Labels = map[string]string{"touched": "yes"}
	if err := hooks.ValidateUpdate(updated, legacy); err != nil {
		t.Errorf("an update keeping the stored sideEffects Some: %v", err)
	}
	if err := hooks.ValidateCreate(updated); err == nil || !strings.Contains(err.Error(), `webhooks[0].sideEffects: Unsupported value: "Some"`) {
		t.Errorf("a create with sideEffects Some: %v, want it refused", err)
	}
}
