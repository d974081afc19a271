package apiserver

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve"
)

// TestClientsOverInProcessMux runs client-go informers and the REST mapper through a running
// server's in-process mux, as the admission plugins and controllers do: the informer lists and
// then watches, and a ConfigMap created afterwards reaches it.
func TestClientsOverInProcessMux(t *testing.T) {
	o := flags.NewServerOptions()
	fss := o.Flags()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if err := fs.Parse([]string{"--data-dir", t.TempDir(), "--bind-address", "127.0.0.1", "--secure-port", port, "--insecure-port", "0"}); err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prepared, err := New(ctx, o, io.Discard, Extras{UnsafeNoFsync: true, Adjust: func(cfg *serve.Config) { cfg.Notify = func(string) error { return nil } }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- prepared.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-prepared.Ready():
	case err := <-done:
		t.Fatalf("the server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server was not ready within 30s")
	}

	c, err := buildClients(prepared.InProcess())
	if err != nil {
		t.Fatal(err)
	}
	added := make(chan string, 16)
	inf := c.informers.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { added <- o.(*corev1.ConfigMap).Name }}); err != nil {
		t.Fatal(err)
	}
	c.informers.Start(ctx.Done())
	defer func() { cancel(); c.informers.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	if _, err := c.kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "through-watch"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case name := <-added:
			seen = name == "through-watch"
		case <-deadline:
			t.Fatal("the informer's watch did not deliver the new ConfigMap")
		}
	}
	m, err := c.mapper.RESTMapping(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "v1")
	if err != nil || m.Resource.Resource != "clusterroles" {
		t.Fatalf("the REST mapper from the in-process discovery: %v, %v", m, err)
	}
}
