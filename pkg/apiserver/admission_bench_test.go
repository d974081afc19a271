package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkAdmission measures what admission adds to a configmap create: a server that does not
// wire admission (admissionregistration.k8s.io turned off), one with the chain and no
// configuration, and one with a validating webhook that matches every create, on loopback. Each
// reports the p50 and p99 latency of its creates besides ns/op.
func BenchmarkAdmission(b *testing.B) {
	b.Run("not-wired", func(b *testing.B) {
		s := servertest.Start(b, "--runtime-config", "admissionregistration.k8s.io/v1=false")
		benchCreates(b, s, "bench-none")
	})
	b.Run("0-configurations", func(b *testing.B) {
		s := servertest.Start(b)
		benchCreates(b, s, "bench-zero")
	})
	b.Run("1-webhook", func(b *testing.B) {
		hook := startAdmissionWebhook(b)
		s := servertest.Start(b)
		c := kubernetes.NewForConfigOrDie(s.AdminConfig)
		url := hook.url + "/allow/bench"
		none := admissionregistrationv1.SideEffectClassNone
		fail := admissionregistrationv1.Fail
		_, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "bench.example.com", SideEffects: &none, FailurePolicy: &fail,
				AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: hook.ca},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		// The plugin sees the configuration once its informer does.
		deadline := time.Now().Add(15 * time.Second)
		for hookCalls(b, hook) == 0 {
			if time.Now().After(deadline) {
				b.Fatal("the webhook was never called")
			}
			post(b, mustHTTPClient(b, s), s.AdminConfig.Host+"/api/v1/namespaces/default/configmaps?dryRun=All",
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"probe-"}}`)
		}
		benchCreates(b, s, "bench-hook")
	})
}

func hookCalls(b *testing.B, hook *admissionWebhook) int {
	resp, err := hook.client.Get(hook.url + "/calls")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.Count(string(body), `"/allow/bench"`)
}

func mustHTTPClient(b *testing.B, s *servertest.Server) *http.Client {
	hc, err := rest.HTTPClientFor(s.AdminConfig)
	if err != nil {
		b.Fatal(err)
	}
	return hc
}

// benchCreates creates b.N configmaps one after the other and reports their latency percentiles.
func benchCreates(b *testing.B, s *servertest.Server, prefix string) {
	hc := mustHTTPClient(b, s)
	url := s.AdminConfig.Host + "/api/v1/namespaces/default/configmaps"
	// Warm the connection and the caches.
	for i := range 20 {
		post(b, hc, url, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-warm-%d"}}`, prefix, i))
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		post(b, hc, url, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-%d"}}`, prefix, i))
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds()), "p99-µs")
}
