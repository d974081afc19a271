package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
)

// The policies of this file are those the reference kube-apiserver v1.37.2 was asked about; the
// answers pinned below are its own.
const forbidNamePolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: forbid-name}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE","UPDATE"]
      resources: ["configmaps"]
  variables:
  - name: forbidden
    expression: "params.data.forbidden"
  validations:
  - expression: "object.metadata.name != variables.forbidden"
    message: "the name is forbidden"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: forbid-name-binding}
spec:
  policyName: forbid-name
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchLabels: {policy: "on"}
`

const warnSizePolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: warn-size}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE","UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) < 2"
    message: "too many keys"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: warn-size-binding}
spec:
  policyName: warn-size
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: warnns}
`

const addLabelPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-label}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [JSONPatch{op: "add", path: "/data", value: {"added": "yes"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-label-binding}
spec:
  policyName: add-label
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: mapns}
`

// applyPolicies creates the policies and bindings of a multi-document YAML.
func applyPolicies(t testing.TB, c kubernetes.Interface, docs string) {
	t.Helper()
	ctx := context.Background()
	ar := c.AdmissionregistrationV1()
	for _, doc := range strings.Split(docs, "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var err error
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			var p admissionregistrationv1.ValidatingAdmissionPolicy
			if err = yaml.UnmarshalStrict([]byte(doc), &p); err == nil {
				_, err = ar.ValidatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{})
			}
		case "ValidatingAdmissionPolicyBinding":
			var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
			if err = yaml.UnmarshalStrict([]byte(doc), &b); err == nil {
				_, err = ar.ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{})
			}
		case "MutatingAdmissionPolicy":
			var p admissionregistrationv1.MutatingAdmissionPolicy
			if err = yaml.UnmarshalStrict([]byte(doc), &p); err == nil {
				_, err = ar.MutatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{})
			}
		case "MutatingAdmissionPolicyBinding":
			var b admissionregistrationv1.MutatingAdmissionPolicyBinding
			if err = yaml.UnmarshalStrict([]byte(doc), &b); err == nil {
				_, err = ar.MutatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{})
			}
		default:
			t.Fatalf("no case for kind %q", meta.Kind)
		}
		if err != nil {
			t.Fatalf("creating %s: %v", meta.Kind, err)
		}
	}
}

// policyServer starts a server with args and creates the namespaces (name: labels) a policy test
// selects: the setup the admission tests share.
func policyServer(t testing.TB, namespaces map[string]map[string]string, args ...string) (*servertest.Server, kubernetes.Interface) {
	t.Helper()
	s := servertest.Start(t, args...)
	c := kubernetes.NewForConfigOrDie(s.AdminConfig)
	for name, labels := range namespaces {
		createNamespace(t, c, name, labels)
	}
	return s, c
}

func createNamespace(t testing.TB, c kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// untilPolicy retries try for up to 10 s until it reports done: kube's policy plugins compile a new
// policy or binding within a second of seeing it, and apictl's informers see it a moment after the
// write.
func untilPolicy(t testing.TB, what string, try func() (done bool, detail string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, detail := try()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %s", what, detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestValidatingAdmissionPolicyDenies: a policy with a ConfigMap param refuses a configmap with the
// policy's message, in the very Status kube-apiserver v1.37.2 sends; other namespaces and names pass.
func TestValidatingAdmissionPolicyDenies(t *testing.T) {
	s, c := policyServer(t, map[string]map[string]string{"pol": {"policy": "on"}})
	ctx := context.Background()
	params := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"}, Data: map[string]string{"forbidden": "bad"}}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, params, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyPolicies(t, c, forbidNamePolicy)

	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"bad\" is forbidden: ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: the name is forbidden","reason":"Invalid","details":{"name":"bad","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'forbid-name' with binding 'forbid-name-binding' denied request: the name is forbidden"}]},"code":422}` + "\n"
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"}}`
	// Dry runs probe until the policy is in force (policies judge them too); then the real create.
	untilPolicy(t, "the policy to deny", func() (bool, string) {
		code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/pol/configmaps?dryRun=All", body)
		return code == http.StatusUnprocessableEntity, got
	})
	if code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/pol/configmaps", body); code != http.StatusUnprocessableEntity || got != want {
		t.Errorf("got %d %s\nwant 422 %s", code, got, want)
	}

	// Names other than the param's, and namespaces the binding does not select, pass.
	for _, cm := range []struct{ ns, name string }{{"pol", "good"}, {"default", "bad"}} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name}}
		if _, err := c.CoreV1().ConfigMaps(cm.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating configmap %s/%s: %v", cm.ns, cm.name, err)
		}
	}

	// Without its param, the binding's parameterNotFoundAction Deny refuses everything it selects.
	if err := c.CoreV1().ConfigMaps("default").Delete(ctx, "limits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	untilPolicy(t, "the missing param to deny", func() (bool, string) {
		_, err := c.CoreV1().ConfigMaps("pol").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "noparam"}}, metav1.CreateOptions{})
		return apierrors.IsInvalid(err) && strings.HasSuffix(err.Error(),
			"failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"), policyErrString(err)
	})
}

// TestValidatingAdmissionPolicyWarns: a binding with validationActions [Warn] lets the write
// through with kube's Warning header, which kubectl prints.
func TestValidatingAdmissionPolicyWarns(t *testing.T) {
	s, c := policyServer(t, map[string]map[string]string{"warnns": nil})
	applyPolicies(t, c, warnSizePolicy)

	const want = "Warning: Validation failed for ValidatingAdmissionPolicy 'warn-size' with binding 'warn-size-binding': too many keys"
	kubectlBin := testtool.Tool(t, "kubectl")
	i := 0
	untilPolicy(t, "kubectl to print the policy's warning", func() (bool, string) {
		i++
		name := "big" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		cmd := exec.Command(kubectlBin, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "-s", s.InsecureURL,
			"-n", "warnns", "create", "configmap", name, "--from-literal=a=1", "--from-literal=b=2")
		cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl create configmap: %v\n%s", err, out)
		}
		return strings.Contains(string(out), want) && strings.Contains(string(out), "configmap/"+name+" created"), string(out)
	})
}

// TestMutatingAdmissionPolicyMutates: the apply configuration adds a label and the JSON patch's
// "add" of /data replaces the map, as kube-apiserver v1.37.2 stored them.
func TestMutatingAdmissionPolicyMutates(t *testing.T) {
	_, c := policyServer(t, map[string]map[string]string{"mapns": nil})
	ctx := context.Background()
	applyPolicies(t, c, addLabelPolicy)

	i := 0
	untilPolicy(t, "the policy to mutate", func() (bool, string) {
		i++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "m-"}, Data: map[string]string{"x": "y"}}
		got, err := c.CoreV1().ConfigMaps("mapns").Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsServiceUnavailable(err) {
			// The plugin reads the schemas it patches with from /openapi/v3 in the background
			// (every 5 s, as in kube); until its first read a policy of its fails with 503.
			return false, err.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		return got.Labels["mutated-by"] == "policy" && len(got.Data) == 1 && got.Data["added"] == "yes",
			"labels " + strings.Join(policyPairs(got.Labels), ",") + " data " + strings.Join(policyPairs(got.Data), ",")
	})
	// Another namespace is not selected.
	got, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"x": "y"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 0 || got.Data["x"] != "y" {
		t.Errorf("a configmap outside the binding's namespaces was mutated: %v %v", got.Labels, got.Data)
	}
}

func policyPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func policyErrString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func policyPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

const maxKeysPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-keys}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: policy.example.com/v1, kind: Limit}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) <= params.maxKeys"
    messageExpression: "'at most ' + string(params.maxKeys) + ' keys (limit ' + params.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-keys-binding}
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef:
    selector: {matchLabels: {tier: limits}}
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: crdns}
`

// TestValidatingAdmissionPolicyCustomResourceParams: the params are custom resources of a CRD made
// after the policy (so the plugin's mapper must read discovery again), chosen by a label selector
// in the request's namespace; every param must allow. The denial is kube-apiserver v1.37.2's.
func TestValidatingAdmissionPolicyCustomResourceParams(t *testing.T) {
	s, c := policyServer(t, map[string]map[string]string{"crdns": nil})
	ctx := context.Background()
	applyPolicies(t, c, maxKeysPolicy)
	// Without its paramKind the policy is misconfigured, and its failurePolicy Fail refuses.
	untilPolicy(t, "the policy to miss its paramKind", func() (bool, string) {
		code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/crdns/configmaps?dryRun=All",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c0"}}`)
		return code == http.StatusUnprocessableEntity && strings.Contains(got, "failed to find resource referenced by paramKind"), got
	})
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "limits.policy.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "policy.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "limits", Singular: "limit", Kind: "Limit", ListKind: "LimitList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"maxKeys": {Type: "integer"}}}}}},
		},
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	served(t, s, "/apis/policy.example.com/v1/namespaces/crdns/limits", http.StatusOK)
	limits := dynamic.NewForConfigOrDie(s.AdminConfig).Resource(schema.GroupVersionResource{Group: "policy.example.com", Version: "v1", Resource: "limits"}).Namespace("crdns")
	for name, max := range map[string]int64{"two": 2, "one": 1} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "policy.example.com/v1", "kind": "Limit",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"tier": "limits"}}, "maxKeys": max}}
		if _, err := limits.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"c1\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most 1 keys (limit one)","reason":"Invalid","details":{"name":"c1","kind":"configmaps","causes":[{"message":"ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most 1 keys (limit one)"}]},"code":422}` + "\n"
	c1 := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"b","c":"d"}}`
	untilPolicy(t, "the policy to deny with its custom resource param", func() (bool, string) {
		code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/crdns/configmaps?dryRun=All", c1)
		return code == http.StatusUnprocessableEntity && strings.Contains(got, "at most 1 keys"), got
	})
	if code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/crdns/configmaps", c1); code != http.StatusUnprocessableEntity || got != want {
		t.Errorf("got %d %s\nwant 422 %s", code, got, want)
	}
	if code, got := policyPost(t, s.InsecureURL+"/api/v1/namespaces/crdns/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2"},"data":{"a":"b"}}`); code != http.StatusCreated {
		t.Errorf("a configmap every param allows: got %d %s", code, got)
	}
}

const auditSizePolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: warn-size}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE","UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) < 2"
    message: "too many keys"
  auditAnnotations:
  - key: keys
    valueExpression: "has(object.data) ? string(size(object.data)) : '0'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: warn-size-binding}
spec:
  policyName: warn-size
  validationActions: [Warn, Audit]
`

// TestValidatingAdmissionPolicyAudits: the Audit action and the policy's auditAnnotations land in
// the request's audit event with the keys and values kube-apiserver v1.37.2 writes.
func TestValidatingAdmissionPolicyAudits(t *testing.T) {
	auditArgs, auditLog := auditing(t, `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: ["configmaps"]}]
- level: None
`)
	_, c := policyServer(t, nil, auditArgs...)
	ctx := context.Background()
	applyPolicies(t, c, auditSizePolicy)

	want := map[string]string{
		"validation.policy.admission.k8s.io/validation_failure": `[{"message":"too many keys","policy":"warn-size","binding":"warn-size-binding","expressionIndex":0,"validationActions":["Warn","Audit"]}]`,
		"warn-size/keys": "2",
	}
	i := 0
	untilPolicy(t, "the audit event to carry the policy's annotations", func() (bool, string) {
		i++
		name := "aud-" + strings.Repeat("x", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"a": "1", "b": "2"}}
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The log is written as the request ends; give the writer a moment.
		var got map[string]string
		for range 20 {
			if got = auditAnnotationsOf(t, auditLog, name); got != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for k, v := range want {
			if got[k] != v {
				return false, fmt.Sprintf("annotations %v", got)
			}
		}
		return true, ""
	})
}

// auditAnnotationsOf returns the annotations of the ResponseComplete event of the create of
// configmap name in the log, or nil.
func auditAnnotationsOf(t *testing.T, path, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Stage       string                `json:"stage"`
			Verb        string                `json:"verb"`
			ObjectRef   struct{ Name string } `json:"objectRef"`
			Annotations map[string]string     `json:"annotations"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		if e.Stage == "ResponseComplete" && e.Verb == "create" && e.ObjectRef.Name == name {
			return e.Annotations
		}
	}
	return nil
}

const keepPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: keep}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["configmaps"]
  validations:
  - expression: "oldObject.metadata.name != 'keep' && request.operation == 'DELETE'"
    message: "this one stays"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: keep-binding}
spec:
  policyName: keep
  validationActions: [Deny]
`

// TestValidatingAdmissionPolicyGuardsDelete: a policy on DELETE sees the stored object as
// oldObject and refuses the delete; other deletes pass.
func TestValidatingAdmissionPolicyGuardsDelete(t *testing.T) {
	_, c := policyServer(t, nil)
	ctx := context.Background()
	cms := c.CoreV1().ConfigMaps("default")
	for _, name := range []string{"keep", "drop"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applyPolicies(t, c, keepPolicy)
	const want = `configmaps "keep" is forbidden: ValidatingAdmissionPolicy 'keep' with binding 'keep-binding' denied request: this one stays`
	// Dry runs probe until the policy is in force: policies judge them too, and nothing is lost.
	untilPolicy(t, "the policy to refuse the delete", func() (bool, string) {
		err := cms.Delete(ctx, "keep", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err) && err.Error() == want, policyErrString(err)
	})
	if err := cms.Delete(ctx, "keep", metav1.DeleteOptions{}); !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("deleting the guarded configmap: got %v, want %s", err, want)
	}
	if err := cms.Delete(ctx, "drop", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting an unguarded configmap: %v", err)
	}
}
