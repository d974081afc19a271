package apiserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
)

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// A TokenRequest over --service-account-max-token-expiration is shortened, and the client is told so
// in a warning, as kube's TokenRequest does.
func TestTokenRequestWarnsWhenShortened(t *testing.T) {
	srv := servertest.Start(t, "--service-account-max-token-expiration", "1h")
	cfg := rest.CopyConfig(srv.AdminConfig)
	got := &warnings{}
	cfg.WarningHandler = got
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tr *authenticationv1.TokenRequest
	var err error
	two := int64(7200)
	// The default ServiceAccount comes from a controller, soon after the start.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		tr, err = client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &two}}, metav1.CreateOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := *tr.Spec.ExpirationSeconds; got != 3600 {
		t.Errorf("expirationSeconds %d, want 3600", got)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.seen) != 1 || got.seen[0] != "requested expiration of 7200 seconds shortened to 3600 seconds" {
		t.Errorf("warnings %q", got.seen)
	}
}
