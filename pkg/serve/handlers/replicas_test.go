package handlers_test

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
)

// clientset returns a typed client for s over TLS with the admin's certificate, sending protobuf as
// kubectl does.
func clientset(t *testing.T, s *servertest.Server) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(s.AdminConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTwoServersOneEtcd(t *testing.T) {
	etcd := startEtcd(t)
	one := servertest.Start(t, "--etcd-servers", etcd.endpoint)
	two := servertest.Start(t, "--etcd-servers", etcd.endpoint)
	c1, c2 := clientset(t, one), clientset(t, two)
	ctx := context.Background()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"n": "0"}}
	if _, err := c1.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c2.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{})
	if err != nil || got.Data["n"] != "0" {
		t.Fatalf("the other server does not see the write at once: %v %+v", err, got)
	}

	// Both servers update from the same read: exactly one wins, the others get 409.
	const writers = 8
	var wg sync.WaitGroup
	results := make(chan error, writers)
	for i := range writers {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		update := got.DeepCopy()
		update.Data["n"] = string(rune('a' + i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.CoreV1().ConfigMaps("default").Update(ctx, update, metav1.UpdateOptions{})
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	wins, conflicts := 0, 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case apierrors.IsConflict(err):
			conflicts++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 || conflicts != writers-1 {
		t.Errorf("%d updates succeeded and %d conflicted, want 1 and %d", wins, conflicts, writers-1)
	}
}

func TestDataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	first, err := servertest.StartE(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"a": "1"}}
	if _, err := clientset(t, first).CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	second, err := servertest.StartE(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	got, err := clientset(t, second).CoreV1().ConfigMaps("default").Get(context.Background(), "kept", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "1" {
		t.Errorf("after a restart: %v %+v", err, got)
	}
}
