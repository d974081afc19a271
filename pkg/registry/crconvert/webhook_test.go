package crconvert_test

import (
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/registry/crconvert"
)

// webhook is a conversion webhook for the tests: it renames spec.size (v1) to spec.replicas (v2) and
// back, and lets a test spoil its answers.
type webhook struct {
	mu      sync.Mutex
	reviews []int // objects per review
	// spoil, when set, changes each converted object before it is sent.
	spoil func(u *unstructured.Unstructured)
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.reviews = append(h.reviews, len(review.Request.Objects))
	spoil := h.spoil
	h.mu.Unlock()
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		from, to := "size", "replicas"
		if review.Request.DesiredAPIVersion == "example.com/v1" {
			from, to = to, from
		}
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", from); ok {
			unstructured.RemoveNestedField(u.Object, "spec", from)
			_ = unstructured.SetNestedField(u.Object, v, "spec", to)
		}
		u.SetAPIVersion(review.Request.DesiredAPIVersion)
		if spoil != nil {
			spoil(u)
		}
		b, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
	}
	review.Request, review.Response = nil, resp
	_ = json.NewEncoder(w).Encode(&review)
}

func (h *webhook) calls() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.reviews...)
}

// startWebhook serves h over TLS and returns the CRD's webhook conversion for it.
func startWebhook(t *testing.T, h http.Handler) (*httptest.Server, *apiextensionsv1.CustomResourceConversion) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	url := srv.URL + "/convert"
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: ca}}}
}

func TestWebhookDecodeBatches(t *testing.T) {
	h := &webhook{}
	_, conv := startWebhook(t, h)
	c := newConverter(t, gizmos(conv))
	values := [][]byte{
		[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a","namespace":"default","uid":"1"},"spec":{"size":3}}`),
		[]byte(`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"b","namespace":"default","uid":"2"},"spec":{"replicas":2}}`),
		[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"c","namespace":"default","uid":"3"},"spec":{"size":5}}`),
	}
	objs, err := c.Decode(values, "v2")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"a","namespace":"default","uid":"1"},"spec":{"replicas":3}}`,
		`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"b","namespace":"default","uid":"2"},"spec":{"replicas":2}}`,
		`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"name":"c","namespace":"default","uid":"3"},"spec":{"replicas":5}}`,
	}
	for i, o := range objs {
		if got := jsonOf(t, o); got != want[i] {
			t.Errorf("object %d: got %s, want %s", i, got, want[i])
		}
	}
	// One review with the two objects that needed converting.
	if got := h.calls(); len(got) != 1 || got[0] != 2 {
		t.Errorf("reviews %v, want one of 2 objects", got)
	}
	back, err := c.ToStorage(objs[1])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, back), `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"generation":1,"name":"b","namespace":"default","uid":"2"},"spec":{"size":2}}`; got != want {
		t.Errorf("to storage: got %s, want %s", got, want)
	}
}

// TestWebhookMetadata pins kube's safe conversion: a webhook may change labels and annotations,
// nothing else of metadata, and may not change name, namespace or UID at all.
func TestWebhookMetadata(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(u *unstructured.Unstructured)
		want  string // the object, or the error
	}{
		{"labels kept, other metadata restored", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"converted": "yes"})
			u.SetFinalizers([]string{"example.com/sneaky"})
			u.SetGeneration(42)
		}, `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"generation":1,"labels":{"converted":"yes"},"name":"a","namespace":"default","uid":"1"},"spec":{"replicas":3}}`},
		{"uid changed", func(u *unstructured.Unstructured) { u.SetUID("other") },
			"conversion webhook for example.com/v1, Kind=Gizmo returned invalid object: must have the same UID: 1 != other"},
		{"name changed", func(u *unstructured.Unstructured) { u.SetName("b") },
			"conversion webhook for example.com/v1, Kind=Gizmo returned invalid object: must have the same name: a != b"},
		{"wrong version", func(u *unstructured.Unstructured) { u.SetAPIVersion("example.com/v1") },
			"conversion webhook for example.com/v1, Kind=Gizmo returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v1)"},
		{"invalid label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a b": "c"}) },
			"conversion webhook for example.com/v1, Kind=Gizmo returned invalid metadata: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, conv := startWebhook(t, &webhook{spoil: tt.spoil})
			c := newConverter(t, gizmos(conv))
			objs, err := c.Decode([][]byte{[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a","namespace":"default","uid":"1"},"spec":{"size":3}}`)}, "v2")
			if err != nil {
				if !strings.HasPrefix(err.Error(), tt.want) || strings.HasPrefix(tt.want, "{") {
					t.Fatalf("error %q, want %s", err, tt.want)
				}
				return
			}
			if got := jsonOf(t, objs[0]); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWebhookDown(t *testing.T) {
	srv, conv := startWebhook(t, &webhook{})
	c := newConverter(t, gizmos(conv))
	url := srv.URL
	srv.Close()
	_, err := c.Decode([][]byte{
		[]byte(`{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"}}`),
		[]byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"b"}}`),
	}, "v2")
	// kube's words, with the index of the object that failed for the caller's message.
	want := `conversion webhook for example.com/v1, Kind=Gizmo failed: Post "` + url + `/convert?timeout=30s": dial tcp `
	var ce *crconvert.Error
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "connection refused") {
		t.Fatalf("error %v, want %s...connection refused", err, want)
	}
	if !errors.As(err, &ce) || ce.Index != 1 {
		t.Errorf("error %#v: want a *crconvert.Error for index 1", err)
	}
}

func TestWebhookServiceRefused(t *testing.T) {
	port := int32(443)
	conv := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "default", Name: "convert", Port: &port}}}}
	c := newConverter(t, gizmos(conv))
	_, err := c.Convert(object(t, `{"apiVersion":"example.com/v2","kind":"Gizmo","metadata":{"name":"a"}}`), "v1")
	if err == nil || !strings.HasPrefix(err.Error(), "conversion webhook for example.com/v2, Kind=Gizmo failed: ") ||
		!strings.Contains(err.Error(), crconvert.ErrServiceReference.Error()) {
		t.Fatalf("error %v: want kube's conversion failure saying %q", err, crconvert.ErrServiceReference)
	}
	t.Log(err)
}
