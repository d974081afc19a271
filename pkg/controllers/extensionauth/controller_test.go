package extensionauth

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestController: the ConfigMap (and kube-system) is created, a deleted ConfigMap comes back, a
// value published by another server stays, and an edit that drops this server's trust is undone
// at the next resync.
func TestController(t *testing.T) {
	now := time.Now()
	ca, other := caPEM(t, "ca", now.Add(time.Hour)), caPEM(t, "other", now.Add(time.Hour))
	required := Info{ClientCA: ca, RequestHeaderCA: ca, UsernameHeaders: []string{"X-Remote-User"},
		GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}, AllowedNames: []string{"front-proxy-client"}}
	client := fake.NewClientset()
	c, err := New(Config{Client: client, Required: func() Info { return required }, WithUID: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Resync: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	cms := client.CoreV1().ConfigMaps(Namespace)
	waitData := func(what string, ok func(map[string]string) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			cm, err := cms.Get(ctx, Name, metav1.GetOptions{})
			if err == nil && ok(cm.Data) {
				return
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: configmap %v, err %v", what, cm, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	want, err := Data(mustMerge(t, Info{}, required), true)
	if err != nil {
		t.Fatal(err)
	}
	equal := func(d map[string]string) bool { return mapsEqual(d, want) }
	waitData("created", equal)
	if _, err := client.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s: %v", Namespace, err)
	}

	if err := cms.Delete(ctx, Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitData("recreated after a delete", equal)

	// Another server trusts another client CA and header: both stay.
	cm, err := cms.Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[KeyClientCA] = string(other)
	cm.Data[KeyRequestHeaderUsername] = `["X-Other-User"]`
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitData("merged at the resync", func(d map[string]string) bool {
		return d[KeyClientCA] == string(other)+string(ca) && d[KeyRequestHeaderUsername] == `["X-Other-User","X-Remote-User"]`
	})
}

func mustMerge(t *testing.T, a, b Info) Info {
	t.Helper()
	m, err := Merge(a, b, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
