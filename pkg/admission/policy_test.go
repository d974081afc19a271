package admission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/utils/ptr"

	"github.com/apictl/apictl/pkg/serve/auth"
)

// policyEnv is a pair of policy plugins over fake clients holding objs, with their informers synced.
type policyEnv struct {
	mutating, validating Plugin
}

func newPolicyEnv(t testing.TB, objs ...runtime.Object) *policyEnv {
	t.Helper()
	return newPolicyEnvWith(t, nil, objs...)
}

// newPolicyEnvWith is newPolicyEnv with adjust applied to the plugins' configuration.
func newPolicyEnvWith(t testing.TB, adjust func(*Config), objs ...runtime.Object) *policyEnv {
	t.Helper()
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		f.Shutdown()
	})
	cfg := Config{
		Client:     openAPIClientset{Interface: client, disco: openAPIDiscovery{FakeDiscovery: client.Discovery().(*fakediscovery.FakeDiscovery)}},
		Dynamic:    dynamicfake.NewSimpleDynamicClient(clientgoscheme.Scheme),
		Informers:  f,
		RESTMapper: meta.MultiRESTMapper{mapper},
		Authorizer: KubeAuthorizer(auth.AlwaysAllow),
		Drained:    stop,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	m, v, err := NewPolicyPlugins(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || len(v) != 1 {
		t.Fatalf("got %d mutating and %d validating plugins, want one each", len(m), len(v))
	}
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return &policyEnv{mutating: m[0], validating: v[0]}
}

// openAPIClientset is a fake clientset whose discovery serves kube's OpenAPI v3 documents (client-go's
// test copy): the mutating plugin reads the schemas its patches apply to there.
type openAPIClientset struct {
	kubernetes.Interface
	disco discovery.DiscoveryInterfaces
}

func (c openAPIClientset) Discovery() discovery.DiscoveryInterfaces { return c.disco }

type openAPIDiscovery struct{ *fakediscovery.FakeDiscovery }

func (openAPIDiscovery) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

// recorder collects the warnings the plugins add to a request.
type recorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	if labels == nil {
		labels = map[string]string{}
	}
	labels["kubernetes.io/metadata.name"] = name
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// configMapRules match creates and updates of configmaps, with the defaults the server gives.
var configMapRules = &admissionregistrationv1.MatchResources{
	NamespaceSelector: &metav1.LabelSelector{},
	ObjectSelector:    &metav1.LabelSelector{},
	MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
	ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}},
}

// forbidName is the policy of the reference run (see TestValidatingPolicy): its param, a ConfigMap,
// names a forbidden name; a second rule refuses a key called secret with a messageExpression.
func forbidName() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "forbid-name"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: configMapRules,
			Variables:        []admissionregistrationv1.Variable{{Name: "forbidden", Expression: "params.data.forbidden"}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.metadata.name != variables.forbidden", Message: "the name is forbidden"},
				{Expression: "!has(object.data) || !('secret' in object.data)",
					MessageExpression: "'configmap ' + object.metadata.name + ' must not carry a secret'",
					Reason:            ptr.To(metav1.StatusReasonInvalid)},
			},
		},
	}
}

func forbidNameBinding(actions []admissionregistrationv1.ValidationAction, notFound admissionregistrationv1.ParameterNotFoundActionType) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "forbid-name-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "forbid-name",
			ValidationActions: actions,
			ParamRef:          &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: &notFound},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": "on"}},
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
			},
		},
	}
}

// warnSize warns (and audits) when a configmap has two keys or more, except for one called limits.
func warnSize() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "warn-size"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: configMapRules,
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "not-limits", Expression: "object.metadata.name != 'limits'"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "!has(object.data) || size(object.data) < 2",
				Message: "too many keys", Reason: ptr.To(metav1.StatusReasonForbidden)}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "keys",
				ValueExpression: "has(object.data) ? string(size(object.data)) : '0'"}},
		},
	}
}

func warnSizeBinding(actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "warn-size-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "warn-size", ValidationActions: actions,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "warnns"}},
				ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent)}},
	}
}

// broken fails at runtime on a configmap without the key "missing".
func broken(failurePolicy admissionregistrationv1.FailurePolicyType) []runtime.Object {
	return []runtime.Object{&admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(failurePolicy),
			MatchConstraints: configMapRules,
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.data.missing == 'x'"}},
		},
	}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "broken-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "broken",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "fpns"}},
				ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: ptr.To(admissionregistrationv1.Equivalent)}},
	}}
}

var configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")

// createAttributes are the attributes of creating obj in its namespace as alice.
func createAttributes(obj runtime.Object, resource schema.GroupVersionResource) *Attributes {
	m, _ := meta.Accessor(obj)
	return NewAttributes(Request{Object: obj, Kind: obj.GetObjectKind().GroupVersionKind(), Resource: resource,
		Namespace: m.GetNamespace(), Name: m.GetName(), Operation: admission.Create, Options: &metav1.CreateOptions{},
		User: &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}})
}

func objectInterfaces() admission.ObjectInterfaces {
	return &Objects{Mapper: runtime.NewEquivalentResourceRegistry()}
}

// statusJSON is err as kube writes it on the wire.
func statusJSON(t *testing.T, err error) string {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a Status", err, err)
	}
	st := se.Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	b, jerr := json.Marshal(st)
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(b)
}

// TestValidatingPolicy pins kube-apiserver v1.37.2's answers, recorded from the reference server
// with the same policies, bindings and requests.
func TestValidatingPolicy(t *testing.T) {
	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	params := configMap("default", "limits", map[string]string{"forbidden": "bad"})
	base := []runtime.Object{namespace("default", nil), namespace("pol", map[string]string{"policy": "on"}),
		namespace("other", nil), namespace("warnns", nil), namespace("fpns", nil), forbidName(), warnSize()}
	tests := []struct {
		name        string
		objs        []runtime.Object
		request     *corev1.ConfigMap
		resource    schema.GroupVersionResource
		wantStatus  string // the whole Status as JSON, or "" when allowed
		wantWarning []string
		wantAudit   map[string]string
	}{{
		name:    "message",
		objs:    []runtime.Object{params, forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request: configMap("pol", "bad", nil),
		wantStatus: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"bad\" is forbidden: ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: the name is forbidden","reason":"Invalid",` +
			`"details":{"name":"bad","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: the name is forbidden"}]},"code":422}`,
	}, {
		name:    "messageExpression",
		objs:    []runtime.Object{params, forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request: configMap("pol", "ok", map[string]string{"secret": "x"}),
		wantStatus: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"ok\" is forbidden: ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: configmap ok must not carry a secret","reason":"Invalid",` +
			`"details":{"name":"ok","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: configmap ok must not carry a secret"}]},"code":422}`,
	}, {
		name:    "allowed",
		objs:    []runtime.Object{params, forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request: configMap("pol", "good", map[string]string{"a": "b"}),
	}, {
		name:    "namespace not selected",
		objs:    []runtime.Object{params, forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request: configMap("other", "bad", nil),
	}, {
		name:    "param missing, Deny",
		objs:    []runtime.Object{forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request: configMap("pol", "noparam", nil),
		wantStatus: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"noparam\" is forbidden: ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: failed to configure binding: no params found for policy binding with ` + "`Deny`" + ` parameterNotFoundAction","reason":"Invalid",` +
			`"details":{"name":"noparam","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: failed to configure binding: no params found for policy binding with ` + "`Deny`" + ` parameterNotFoundAction"}]},"code":422}`,
	}, {
		name:    "param missing, Allow",
		objs:    []runtime.Object{forbidNameBinding(deny, admissionregistrationv1.AllowAction)},
		request: configMap("pol", "noparam2", nil),
	}, {
		name:    "reason Forbidden",
		objs:    []runtime.Object{warnSizeBinding(admissionregistrationv1.Deny)},
		request: configMap("warnns", "big3", map[string]string{"a": "1", "b": "2"}),
		wantStatus: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"big3\" is forbidden: ValidatingAdmissionPolicy 'warn-size' with binding 'warn-size-binding' denied request: too many keys","reason":"Forbidden",` +
			`"details":{"name":"big3","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'warn-size' with binding 'warn-size-binding' denied request: too many keys"}]},"code":403}`,
		// Audit annotations are published whatever the binding's actions.
		wantAudit: map[string]string{"warn-size/keys": "2"},
	}, {
		name:        "Warn and Audit",
		objs:        []runtime.Object{warnSizeBinding(admissionregistrationv1.Warn, admissionregistrationv1.Audit)},
		request:     configMap("warnns", "big", map[string]string{"a": "1", "b": "2"}),
		wantWarning: []string{"Validation failed for ValidatingAdmissionPolicy 'warn-size' with binding 'warn-size-binding': too many keys"},
		wantAudit: map[string]string{
			"warn-size/keys": "2",
			"validation.policy.admission.k8s.io/validation_failure": `[{"message":"too many keys","policy":"warn-size","binding":"warn-size-binding","expressionIndex":0,"validationActions":["Warn","Audit"]}]`,
		},
	}, {
		name:    "matchConditions false",
		objs:    []runtime.Object{warnSizeBinding(admissionregistrationv1.Deny)},
		request: configMap("warnns", "limits", map[string]string{"a": "1", "b": "2"}),
	}, {
		name:    "runtime error, failurePolicy Fail",
		objs:    broken(admissionregistrationv1.Fail),
		request: configMap("fpns", "c1", map[string]string{"a": "b"}),
		wantStatus: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"c1\" is forbidden: ValidatingAdmissionPolicy 'broken' with binding 'broken-binding' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing","reason":"Invalid",` +
			`"details":{"name":"c1","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'broken' with binding 'broken-binding' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing"}]},"code":422}`,
	}, {
		name:    "runtime error, failurePolicy Ignore",
		objs:    broken(admissionregistrationv1.Ignore),
		request: configMap("fpns", "c2", map[string]string{"a": "b"}),
	}, {
		name:     "excluded resource",
		objs:     []runtime.Object{params, forbidNameBinding(deny, admissionregistrationv1.DenyAction)},
		request:  configMap("pol", "bad", nil),
		resource: schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newPolicyEnv(t, append(append([]runtime.Object{}, base...), tt.objs...)...)
			rec := &recorder{}
			ctx := warning.WithWarningRecorder(context.Background(), rec)
			resource := tt.resource
			if resource.Empty() {
				resource = configMaps
			}
			attrs := createAttributes(tt.request, resource)
			err := validate(ctx, t, env.validating, attrs)
			got := ""
			if err != nil {
				got = statusJSON(t, err)
			}
			if got != tt.wantStatus {
				t.Errorf("status:\n got %s\nwant %s", got, tt.wantStatus)
			}
			if strings.Join(rec.warnings, "\n") != strings.Join(tt.wantWarning, "\n") {
				t.Errorf("warnings: got %q, want %q", rec.warnings, tt.wantWarning)
			}
			audit := attrs.GetAnnotations(auditinternal.LevelMetadata)
			if len(audit) != len(tt.wantAudit) {
				t.Errorf("audit annotations: got %v, want %v", audit, tt.wantAudit)
			}
			for k, v := range tt.wantAudit {
				if audit[k] != v {
					t.Errorf("audit annotation %s: got %q, want %q", k, audit[k], v)
				}
			}
		})
	}
}

// validate asks p about attrs as the chain does. The plugin waits for its first compilation of the
// policies and for the param informers to sync, so one call answers.
func validate(ctx context.Context, t *testing.T, p Plugin, attrs admission.Attributes) error {
	t.Helper()
	if !p.Handles(attrs.GetOperation()) {
		t.Fatalf("%s does not handle %s", p.Name, attrs.GetOperation())
	}
	return p.Interface.(admission.ValidationInterface).Validate(ctx, attrs, objectInterfaces())
}

// waitFor polls cond for up to 5 s: informers deliver their events a moment after they sync.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
