// Package clients runs client-go's informers and leader election against a real apictl server.
package clients

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/internal/servertest"
)

// recorder collects an informer's notifications.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == s {
			return true
		}
	}
	return false
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func TestInformerSeesEveryChangeAndSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	ports := []string{"--secure-port", freePort(t), "--insecure-port", freePort(t)}
	srv, err := servertest.StartE(context.Background(), dir, ports...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(srv.AdminConfig)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var rec recorder
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().ConfigMaps().Informer()
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { rec.add("add " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(_, obj any) {
			cm := obj.(*corev1.ConfigMap)
			rec.add("update " + cm.Name + "=" + cm.Data["v"])
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			rec.add("delete " + obj.(*corev1.ConfigMap).Name)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer never synced")
	}
	cms := client.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"add a", "update a=2", "add b", "delete b"} {
		eventually(t, want, func() bool { return rec.has(want) })
	}

	// The server goes away and comes back on the same address and data: the informer re-lists or
	// resumes its watch and goes on seeing changes.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	srv, err = servertest.StartE(context.Background(), dir, ports...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "add after the restart", func() bool { return rec.has("add after") })
}
