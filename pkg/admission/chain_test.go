package admission

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// chainEnv is a webhook-only chain over a fake clientset, its informers synced.
type chainEnv struct {
	chain  *Chain
	client *fake.Clientset
}

func newChainEnv(t *testing.T) *chainEnv {
	t.Helper()
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := New(Config{Client: client, Informers: f, Drained: ctx.Done()})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	return &chainEnv{chain: ch, client: client}
}

func eventuallyTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestChainActiveFollowsConfigurations(t *testing.T) {
	e := newChainEnv(t)
	if got := e.chain.Names(); !reflect.DeepEqual(got, []string{"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}) {
		t.Errorf("plugins %v", got)
	}
	if e.chain.Active() {
		t.Fatal("active without any configuration")
	}
	ctx := context.Background()
	vwc := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := vwc.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "the chain to be active", e.chain.Active)
	if err := vwc.Delete(ctx, "v", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "the chain to be idle", func() bool { return !e.chain.Active() })
	var nilChain *Chain
	if nilChain.Active() || nilChain.Admit(ctx, nil, nil) != nil || nilChain.Validate(ctx, nil, nil) != nil {
		t.Error("a nil chain must admit everything")
	}
}

// reviewServer is a TLS webhook answering with respond.
func reviewServer(t *testing.T, respond func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) (string, []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := respond(review.Request)
		resp.UID = review.Request.UID
		_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// chainRecorder collects warnings.
type chainRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *chainRecorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, text)
}

func cmAttributes(cm *corev1.ConfigMap, dryRun bool) *Attributes {
	return NewAttributes(Request{Object: cm, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: cm.Namespace, Name: cm.Name,
		Operation: admission.Create, Options: &metav1.CreateOptions{}, DryRun: dryRun, User: &user.DefaultInfo{Name: "alice"}})
}

func TestChainCallsWebhooks(t *testing.T) {
	e := newChainEnv(t)
	ctx := context.Background()
	mutateURL, ca := reviewServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Warnings: []string{"labelled"},
			Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"added":"yes"}}]`)}
	})
	denyURL, denyCA := reviewServer(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if req.Name == "bad" {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 403, Message: "no"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	none := admissionregistrationv1.SideEffectClassNone
	// The API server defaults the selectors to {}; the fake clientset does not, and a nil selector
	// matches nothing.
	all := &metav1.LabelSelector{}
	if _, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "m"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m.example.com", Rules: rules, SideEffects: &none, NamespaceSelector: all, ObjectSelector: all,
			AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mutateURL, CABundle: ca}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	some := admissionregistrationv1.SideEffectClass("Some")
	if _, err := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "v"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v.example.com", Rules: rules, SideEffects: &some, NamespaceSelector: all, ObjectSelector: all,
			AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &denyURL, CABundle: denyCA}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "both plugins to see their configuration", func() bool {
		return e.chain.mutating[0].Configured() && e.chain.validating[0].Configured()
	})
	objs := &Objects{}

	rec := &chainRecorder{}
	wctx := warning.WithWarningRecorder(ctx, rec)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: "ns"}}
	attrs := cmAttributes(cm, false)
	eventuallyTrue(t, "the webhook to label the object", func() bool {
		if err := e.chain.Admit(wctx, attrs, objs); err != nil {
			t.Fatal(err)
		}
		return cm.Labels["added"] == "yes"
	})
	if rec.msgs[0] != "labelled" {
		t.Errorf("warnings %q", rec.msgs)
	}
	if a := attrs.GetAnnotations(auditinternal.LevelMetadata); a["mutation.webhook.admission.k8s.io/round_0_index_0"] == "" {
		t.Errorf("audit annotations %v", a)
	}
	if a := attrs.GetAnnotations(auditinternal.LevelRequest); a["patch.webhook.admission.k8s.io/round_0_index_0"] == "" {
		t.Errorf("request-level audit annotations %v", a)
	}
	if err := e.chain.Validate(ctx, attrs, objs); err != nil {
		t.Errorf("validating good: %v", err)
	}

	bad := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "ns"}}
	err := e.chain.Validate(ctx, cmAttributes(bad, false), objs)
	if err == nil || err.Error() != `admission webhook "v.example.com" denied the request: no` {
		t.Errorf("validating bad: %v", err)
	}
	// A webhook with side effects is not called for a dry run: the request fails, as in kube.
	err = e.chain.Validate(ctx, cmAttributes(bad, true), objs)
	if err == nil || err.Error() != `admission webhook "v.example.com" does not support dry run` {
		t.Errorf("dry run: %v", err)
	}
}

func TestConvertor(t *testing.T) {
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}}
	out := &corev1.ConfigMap{}
	c := convertor{}
	if err := c.Convert(in, out, nil); err != nil || out.Name != "a" || out.Labels["x"] != "y" {
		t.Errorf("same type: %v %+v", err, out)
	}
	if err := c.Convert(in, &corev1.Secret{}, nil); err == nil {
		t.Error("ConfigMap to Secret converted")
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "W"}
	mk := func(version string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: version, Kind: gvk.Kind})
		return u
	}
	v1, v2 := mk("v1"), mk("v2")
	if err := c.Convert(v1, mk("v1"), nil); err != nil {
		t.Errorf("same version: %v", err)
	}
	if err := c.Convert(v1, v2, nil); err == nil {
		t.Error("converted to another version without a converter")
	}
	c.convert = func(in *unstructured.Unstructured, to schema.GroupVersionKind) (*unstructured.Unstructured, error) {
		out := in.DeepCopy()
		out.SetAPIVersion(to.GroupVersion().String())
		out.Object["converted"] = true
		return out, nil
	}
	if err := c.Convert(v1, v2, nil); err != nil || v2.Object["converted"] != true || v2.GetAPIVersion() != "example.com/v2" {
		t.Errorf("other version: %v %v", err, v2.Object)
	}
	if obj, err := (creater{}).New(corev1.SchemeGroupVersion.WithKind("ConfigMap")); err != nil || reflect.TypeOf(obj) != reflect.TypeOf(&corev1.ConfigMap{}) {
		t.Errorf("creater for ConfigMap: %T %v", obj, err)
	}
	if obj, err := (creater{}).New(gvk); err != nil || obj.GetObjectKind().GroupVersionKind() != gvk {
		t.Errorf("creater for a custom kind: %v %v", obj, err)
	}
	var _ runtime.ObjectConvertor = c
}

func TestAttributesAnnotations(t *testing.T) {
	a := cmAttributes(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, false)
	if err := a.AddAnnotation("example.com/meta", "1"); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAnnotationWithLevel("example.com/request", "2", auditinternal.LevelRequest); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAnnotation("example.com/meta", "other"); err == nil {
		t.Error("an annotation was overwritten")
	}
	if err := a.AddAnnotation("no-slash", "x"); err == nil {
		t.Error("a key without a domain was accepted")
	}
	if got := a.GetAnnotations(auditinternal.LevelMetadata); !reflect.DeepEqual(got, map[string]string{"example.com/meta": "1"}) {
		t.Errorf("metadata level: %v", got)
	}
	if got := a.GetAnnotations(auditinternal.LevelRequestResponse); len(got) != 2 {
		t.Errorf("request-response level: %v", got)
	}
}

func TestFeatureGate(t *testing.T) {
	fg, err := FeatureGate(map[string]bool{"ExcludeAdmissionWebhookVirtualResources": false, "NotAKubeGate": true})
	if err != nil {
		t.Fatal(err)
	}
	if fg.Enabled("ExcludeAdmissionWebhookVirtualResources") {
		t.Error("the setting was not applied")
	}
	def, err := FeatureGate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !def.Enabled("ExcludeAdmissionWebhookVirtualResources") {
		t.Error("kube's default changed: the process-wide gate was modified")
	}
}

// BenchmarkChainIdle is what a write pays for admission when nothing is configured: the Active test.
func BenchmarkChainIdle(b *testing.B) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	ch, err := New(Config{Client: client, Informers: f, Drained: ctx.Done()})
	if err != nil {
		b.Fatal(err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	b.ReportAllocs()
	for b.Loop() {
		if ch.Active() {
			b.Fatal("active")
		}
	}
}
