package apiserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/webhooktest"
)

// admissionWebhook is the test/admissionwebhook program, running.
type admissionWebhook struct {
	*webhooktest.Process
	url    string // https://127.0.0.1:PORT
	ca     []byte
	client *http.Client
}

// webhookCalls are the reviews the webhook counted for a path.
type webhookCalls struct {
	Total  int `json:"total"`
	DryRun int `json:"dryRun"`
}

// calls returns what the webhook received so far, by path.
func (w *admissionWebhook) calls(t *testing.T) map[string]webhookCalls {
	t.Helper()
	resp, err := w.client.Get(w.url + "/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]webhookCalls{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// startAdmissionWebhook builds and starts test/admissionwebhook with a serving certificate for
// 127.0.0.1 and the service hooks.by-service (a webhook called through a service is verified as
// <service>.<namespace>.svc), signed by a CA made here.
func startAdmissionWebhook(t testing.TB) *admissionWebhook {
	t.Helper()
	certs, err := webhooktest.NewCertificates("admissionwebhook", "hooks.by-service.svc")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certs.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, certs.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	p := webhooktest.Start(t, "github.com/apictl/apictl/test/admissionwebhook", "--tls-cert-file", certFile, "--tls-private-key-file", keyFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs.CA)
	return &admissionWebhook{Process: p, url: p.URL, ca: certs.CA,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
}

// closedURL is an https URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr
}

// auditing writes the audit policy into a directory of the test's and returns the flags that audit
// by it to a log file there, and the log's path.
func auditing(t *testing.T, policy string) (args []string, logPath string) {
	t.Helper()
	dir := t.TempDir()
	policyPath, logPath := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--audit-policy-file", policyPath, "--audit-log-path", logPath}, logPath
}

// admissionNamespace creates a namespace labelled for one case: each case's webhooks select their
// namespace, so cases do not see each other's hooks.
func admissionNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	createNamespace(t, c, name, map[string]string{"admission-case": name})
}

// hookFor is a webhook of one case: CREATE of configmaps (and widgets) in the case's namespace.
func hookFor(name, caseName, url string, ca []byte) (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations, *metav1.LabelSelector) {
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
		[]admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"", "example.com"}, APIVersions: []string{"*"},
				Resources: []string{"configmaps", "widgets"}},
		}},
		&metav1.LabelSelector{MatchLabels: map[string]string{"admission-case": caseName}}
}

func validatingHook(name, caseName, url string, ca []byte, policy admissionregistrationv1.FailurePolicyType, timeout int32) *admissionregistrationv1.ValidatingWebhookConfiguration {
	cc, rules, sel := hookFor(name, caseName, url, ca)
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: caseName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name, ClientConfig: cc, Rules: rules,
			NamespaceSelector: sel, FailurePolicy: &policy, SideEffects: &none, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}}}}
}

// waitForHook creates probe configmaps in ns until check says the hook acts on them: the webhook
// plugins see a configuration once their informer does.
func waitForHook(t *testing.T, c kubernetes.Interface, ns string, check func(*corev1.ConfigMap, error) bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		cm, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(fmt.Sprintf("probe-%d", i)),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if check(cm, err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook of %s never acted: last %v", ns, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hookWarnings collects the Warning headers client-go reports.
type hookWarnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *hookWarnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *hookWarnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}

// auditAnnotation finds the ResponseComplete event of verb on the object named name in the audit
// log and checks one of its annotations.
func auditAnnotation(path, name, verb, key, want string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			Verb      string `json:"verb"`
			Stage     string `json:"stage"`
			ObjectRef *struct {
				Name string `json:"name"`
			} `json:"objectRef"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Verb != verb || ev.Stage != "ResponseComplete" || ev.ObjectRef == nil || ev.ObjectRef.Name != name {
			continue
		}
		if ev.Annotations[key] != want {
			return fmt.Errorf("annotation %s = %q, want %q (all: %v)", key, ev.Annotations[key], want, ev.Annotations)
		}
		return nil
	}
	return fmt.Errorf("no ResponseComplete %s event for %s", verb, name)
}

// rawCreate POSTs body to path as the admin and returns the response.
func rawCreate(t *testing.T, s *servertest.Server, path, body string) (int, []byte) {
	t.Helper()
	hc, err := rest.HTTPClientFor(s.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Post(s.AdminConfig.Host+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// sameJSON compares a response with the one kube gives.
func sameJSON(t *testing.T, code int, body []byte, wantCode int, want string) {
	t.Helper()
	var got, exp any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("response %d %s: %v", code, body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("expected JSON: %v", err)
	}
	if code != wantCode || !reflect.DeepEqual(got, exp) {
		t.Errorf("response %d\n%s\nwant %d\n%s", code, body, wantCode, want)
	}
}

// statusOf returns the Status of a refused request.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se *apierrors.StatusError
	if err == nil || !asStatus(err, &se) {
		t.Fatalf("got %v, want a Status error", err)
	}
	return se.ErrStatus
}

func asStatus(err error, out **apierrors.StatusError) bool {
	se, ok := err.(*apierrors.StatusError)
	if ok {
		*out = se
	}
	return ok
}

func TestAdmissionWebhooks(t *testing.T) {
	hook := startAdmissionWebhook(t)
	auditArgs, auditLog := auditing(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
	s := servertest.Start(t, auditArgs...)
	ctx := context.Background()
	cfg := rest.CopyConfig(s.AdminConfig)
	warn := &hookWarnings{}
	cfg.WarningHandler = warn
	c := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	reg := c.AdmissionregistrationV1()

	t.Run("mutating webhook labels configmaps and custom resources", func(t *testing.T) {
		admissionNamespace(t, c, "mutate")
		crds := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
		if _, err := crds.Create(ctx, widgetCRD(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cc, rules, sel := hookFor("mutate.example.com", "mutate", hook.url+"/mutate/added=yes", hook.ca)
		none := admissionregistrationv1.SideEffectClassNone
		_, err := reg.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "mutate"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mutate.example.com", ClientConfig: cc, Rules: rules,
				NamespaceSelector: sel, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitForHook(t, c, "mutate", func(cm *corev1.ConfigMap, err error) bool { return err == nil && cm.Labels["added"] == "yes" })
		warn.take()
		cm, err := c.CoreV1().ConfigMaps("mutate").Create(ctx, configMap("labelled"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["added"] != "yes" {
			t.Errorf("created configmap labels %v, want added=yes", cm.Labels)
		}
		if got := warn.take(); len(got) != 1 || got[0] != "admissionwebhook added the label added=yes" {
			t.Errorf("warnings %q", got)
		}
		stored, err := c.CoreV1().ConfigMaps("mutate").Get(ctx, "labelled", metav1.GetOptions{})
		if err != nil || stored.Labels["added"] != "yes" {
			t.Errorf("stored configmap %v, %v", stored.Labels, err)
		}
		// The webhook's mutation is in the create's audit event, as kube's audit decorator records it.
		eventually(t, "the audit event of the create", func() error {
			return auditAnnotation(auditLog, "labelled", "create", "mutation.webhook.admission.k8s.io/round_0_index_0",
				`{"configuration":"mutate","webhook":"mutate.example.com","mutated":true}`)
		})
		// A patch is admitted as an UPDATE of the patched object: the label comes back.
		patched, err := c.CoreV1().ConfigMaps("mutate").Patch(ctx, "labelled", types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"added":null,"other":"x"}}}`), metav1.PatchOptions{})
		if err != nil || patched.Labels["added"] != "yes" || patched.Labels["other"] != "x" {
			t.Errorf("patched configmap %v, %v", patched.Labels, err)
		}
		// The CRD was created while the server ran: its objects are admitted too.
		widgets := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("mutate")
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w1", "labels": map[string]any{"own": "label"}}, "spec": map[string]any{"size": int64(3)}}}
		var got *unstructured.Unstructured
		eventually(t, "creating a widget", func() error {
			var err error
			got, err = widgets.Create(ctx, w, metav1.CreateOptions{})
			return err
		})
		if l := got.GetLabels(); l["added"] != "yes" || l["own"] != "label" {
			t.Errorf("widget labels %v, want own=label and added=yes", l)
		}
	})

	t.Run("validating webhook denies a name", func(t *testing.T) {
		admissionNamespace(t, c, "deny")
		h := validatingHook("deny.example.com", "deny", hook.url+"/deny/forbidden/403/the%20name%20forbidden%20is%20reserved", hook.ca,
			admissionregistrationv1.Fail, 10)
		if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, h, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the webhook denying", func() error {
			_, err := c.CoreV1().ConfigMaps("deny").Create(ctx, configMap("forbidden"), metav1.CreateOptions{})
			if err == nil {
				_ = c.CoreV1().ConfigMaps("deny").Delete(ctx, "forbidden", metav1.DeleteOptions{})
				return fmt.Errorf("created")
			}
			return nil
		})
		// kube-apiserver v1.37.2 answers exactly this body (recorded from the reference server): the
		// webhook's code, its message after the webhook's name, and no reason.
		code, body := rawCreate(t, s, "/api/v1/namespaces/deny/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"forbidden"}}`)
		sameJSON(t, code, body, 403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
			"message":"admission webhook \"deny.example.com\" denied the request: the name forbidden is reserved","code":403}`)
		if _, err := c.CoreV1().ConfigMaps("deny").Create(ctx, configMap("allowed"), metav1.CreateOptions{}); err != nil {
			t.Errorf("another name: %v", err)
		}
	})

	t.Run("failurePolicy Fail refuses when the webhook is down, Ignore passes", func(t *testing.T) {
		admissionNamespace(t, c, "down-fail")
		admissionNamespace(t, c, "down-ignore")
		down := closedURL(t)
		for _, h := range []*admissionregistrationv1.ValidatingWebhookConfiguration{
			validatingHook("down-fail.example.com", "down-fail", down+"/allow", hook.ca, admissionregistrationv1.Fail, 10),
			validatingHook("down-ignore.example.com", "down-ignore", down+"/allow", hook.ca, admissionregistrationv1.Ignore, 10),
		} {
			if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, h, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		eventually(t, "the webhook failing", func() error {
			_, err = c.CoreV1().ConfigMaps("down-fail").Create(ctx, configMap("refused"), metav1.CreateOptions{})
			if err == nil {
				_ = c.CoreV1().ConfigMaps("down-fail").Delete(ctx, "refused", metav1.DeleteOptions{})
				return fmt.Errorf("created")
			}
			return nil
		})
		// As the reference server answers, with a cause repeating the message.
		host := strings.TrimPrefix(down, "https://")
		msg := fmt.Sprintf(`failed calling webhook \"down-fail.example.com\": failed to call webhook: Post \"%s/allow?timeout=10s\": dial tcp %s: connect: connection refused`, down, host)
		code, body := rawCreate(t, s, "/api/v1/namespaces/down-fail/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refused"}}`)
		sameJSON(t, code, body, 500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
			"message":"Internal error occurred: `+msg+`","reason":"InternalError","details":{"causes":[{"message":"`+msg+`"}]},"code":500}`)
		if _, err := c.CoreV1().ConfigMaps("down-ignore").Create(ctx, configMap("passes"), metav1.CreateOptions{}); err != nil {
			t.Errorf("failurePolicy Ignore: %v", err)
		}
	})

	t.Run("timeoutSeconds is honoured", func(t *testing.T) {
		admissionNamespace(t, c, "slow")
		h := validatingHook("slow.example.com", "slow", hook.url+"/sleep/20", hook.ca, admissionregistrationv1.Fail, 1)
		if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, h, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var err error
		var took time.Duration
		eventually(t, "the webhook timing out", func() error {
			start := time.Now()
			_, err = c.CoreV1().ConfigMaps("slow").Create(ctx, configMap("slow"), metav1.CreateOptions{})
			took = time.Since(start)
			if err == nil {
				_ = c.CoreV1().ConfigMaps("slow").Delete(ctx, "slow", metav1.DeleteOptions{})
				return fmt.Errorf("created")
			}
			return nil
		})
		if took > 5*time.Second {
			t.Errorf("the request took %v with timeoutSeconds 1", took)
		}
		got := statusOf(t, err)
		wantMsg := fmt.Sprintf(`Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "%s/sleep/20?timeout=1s": context deadline exceeded`, hook.url)
		if got.Code != 500 || got.Reason != metav1.StatusReasonInternalError || got.Message != wantMsg {
			t.Errorf("status %+v\nwant message %s", got, wantMsg)
		}
	})

	t.Run("webhook referenced by service", func(t *testing.T) {
		admissionNamespace(t, c, "by-service")
		_, port, err := net.SplitHostPort(strings.TrimPrefix(hook.url, "https://"))
		if err != nil {
			t.Fatal(err)
		}
		var p int32
		if _, err := fmt.Sscan(port, &p); err != nil {
			t.Fatal(err)
		}
		// An ExternalName service reaches the webhook on this machine, as FIELD-NOTES explains.
		if _, err := c.CoreV1().Services("by-service").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h := validatingHook("by-service.example.com", "by-service", "", hook.ca, admissionregistrationv1.Fail, 10)
		path := "/deny/refused-by-service/422/refused-through-the-service"
		h.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{CABundle: hook.ca,
			Service: &admissionregistrationv1.ServiceReference{Namespace: "by-service", Name: "hooks", Path: &path, Port: &p}}
		if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, h, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var err2 error
		eventually(t, "the webhook refusing through its service", func() error {
			_, err2 = c.CoreV1().ConfigMaps("by-service").Create(ctx, configMap("refused-by-service"), metav1.CreateOptions{})
			if err2 == nil {
				_ = c.CoreV1().ConfigMaps("by-service").Delete(ctx, "refused-by-service", metav1.DeleteOptions{})
				return fmt.Errorf("created")
			}
			if !strings.Contains(err2.Error(), "refused-through-the-service") {
				return err2
			}
			return nil
		})
		if got := statusOf(t, err2); got.Code != 422 || got.Message != `admission webhook "by-service.example.com" denied the request: refused-through-the-service` {
			t.Errorf("status %+v", got)
		}
	})

	t.Run("dry run calls webhooks with sideEffects None", func(t *testing.T) {
		admissionNamespace(t, c, "dry")
		// The root CA controller writes kube-root-ca.crt into every new namespace. Once it has, no
		// write but the test's reaches the webhook below: a late one was counted as a second call
		// (a CI flake).
		eventually(t, "kube-root-ca.crt in dry", func() error {
			_, err := c.CoreV1().ConfigMaps("dry").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			return err
		})
		h := validatingHook("dry.example.com", "dry", hook.url+"/allow/dry", hook.ca, admissionregistrationv1.Fail, 10)
		if _, err := reg.ValidatingWebhookConfigurations().Create(ctx, h, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForHook(t, c, "dry", func(*corev1.ConfigMap, error) bool { return hook.calls(t)["/allow/dry"].DryRun > 0 })
		before := hook.calls(t)["/allow/dry"]
		if _, err := c.CoreV1().ConfigMaps("dry").Create(ctx, configMap("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		after := hook.calls(t)["/allow/dry"]
		if after.DryRun != before.DryRun+1 || after.Total != before.Total+1 {
			t.Errorf("calls before %+v, after %+v: want one more dry-run call", before, after)
		}
		if _, err := c.CoreV1().ConfigMaps("dry").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the dry-run configmap was stored: %v", err)
		}
	})
}

// TestAdmissionInformersStartWithTheFirstConfiguration: a server without webhook configurations or
// policy bindings runs no informer of them (the plugins and their informers are built by the first
// write that a configuration exists for); a validating webhook configuration starts the validating
// webhook plugin's informer alone.
func TestAdmissionInformersStartWithTheFirstConfiguration(t *testing.T) {
	hook := startAdmissionWebhook(t)
	s := servertest.Start(t)
	c := kubernetes.NewForConfigOrDie(s.AdminConfig)
	watchers := func(resource string) string {
		return metricSample(t, s, `apiserver_registered_watchers{group="admissionregistration.k8s.io",resource="`+resource+`"}`)
	}
	configurations := []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
		"validatingadmissionpolicybindings", "mutatingadmissionpolicybindings", "validatingadmissionpolicies", "mutatingadmissionpolicies"}
	// The garbage collector watches every resource: the plugins' informers are counted on top of
	// its watches, once it has them. It starts on the Lease, which may be after the server is ready.
	for _, r := range configurations {
		for deadline := time.Now().Add(30 * time.Second); watchers(r) == "0"; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the garbage collector's watch did not come in 30 s", r)
			}
		}
	}
	before := map[string]int{}
	for _, r := range configurations {
		n, err := strconv.Atoi(watchers(r))
		if err != nil {
			t.Fatalf("%s: watchers: %v", r, err)
		}
		before[r] = n
	}
	admissionNamespace(t, c, "first")
	h := validatingHook("first.example.com", "first", hook.url+"/deny/refused/403/refused", hook.ca, admissionregistrationv1.Fail, 10)
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(), h, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch cache sees the configuration a moment after the write; dry runs probe until then.
	untilPolicy(t, "the webhook to refuse", func() (bool, string) {
		_, err := c.CoreV1().ConfigMaps("first").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "refused"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && err.Error() == `admission webhook "first.example.com" denied the request: refused`, policyErrString(err)
	})
	for _, r := range configurations {
		want := before[r]
		if r == "validatingwebhookconfigurations" {
			want++
		}
		if got := watchers(r); got != strconv.Itoa(want) {
			t.Errorf("%s: %s watchers after a validating webhook was configured, want %d", r, got, want)
		}
	}
}
