package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kubeconfig "k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
	"github.com/apictl/apictl/pkg/storage/embedded"
)

const gadgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// encryptionFile is an EncryptionConfiguration for Secrets and gadgets.example.com: aescbc with the
// named keys, the first writing, then identity so that data stored before encryption still reads.
func encryptionFile(keyNames ...string) string {
	var keys []string
	for _, name := range keyNames {
		keys = append(keys, "{name: "+name+", secret: "+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte(name[len(name)-1:]), 32))+"}")
	}
	return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, gadgets.example.com]
  providers:
  - aescbc: {keys: [` + strings.Join(keys, ", ") + `]}
  - identity: {}
`
}

// etcdForTest runs an etcd of the test's own, so that the test can read what the server stored.
func etcdForTest(t *testing.T) (string, *clientv3.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	client, err := clientv3.New(clientv3.Config{Endpoints: srv.ClientURLs(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return srv.ClientURLs()[0], client
}

func rawGet(t *testing.T, etcd *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := etcd.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s from etcd: %v (%d keys)", key, err, len(resp.Kvs))
	}
	return resp.Kvs[0].Value
}

// nextSecret waits for the watch's next event about a Secret.
func nextSecret(t *testing.T, w watch.Interface) (watch.EventType, *corev1.Secret) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		s, isSecret := ev.Object.(*corev1.Secret)
		if !ok || !isSecret {
			t.Fatalf("watch sent %v %#v", ev.Type, ev.Object)
		}
		return ev.Type, s
	case <-time.After(20 * time.Second):
		t.Fatal("no watch event within 20s")
	}
	return "", nil
}

// TestEncryptionAtRest: Secrets and a custom resource are stored with kube's format, read back
// through GET, LIST and watch, are readable by kube's own transformer (and the other way round), and
// a key rotation done kube's way (new key first, reload, kubectl replace) rewrites every Secret.
func TestEncryptionAtRest(t *testing.T) {
	endpoint, etcd := etcdForTest(t)
	dir := t.TempDir()
	configPath, crdPath := filepath.Join(dir, "encryption.yaml"), filepath.Join(dir, "gadgets.yaml")
	if err := os.WriteFile(configPath, []byte(encryptionFile("key1")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crdPath, []byte(gadgetsCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, "--etcd-servers", endpoint, "--api-config", crdPath,
		"--encryption-provider-config", configPath, "--encryption-provider-config-automatic-reload")
	c, err := kubernetes.NewForConfig(s.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := c.CoreV1().Secrets("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}, Data: map[string][]byte{"password": []byte("hunter2")}}
	if _, err := c.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, etcd, "/registry/secrets/default/s1")
	if !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString([]byte("hunter2")))) {
		t.Fatalf("etcd holds %q, want it encrypted with key1", raw[:min(len(raw), 60)])
	}
	if got, err := c.CoreV1().Secrets("default").Get(ctx, "s1", metav1.GetOptions{}); err != nil || string(got.Data["password"]) != "hunter2" {
		t.Errorf("GET = %v, %v", got, err)
	}
	if typ, got := nextSecret(t, w); typ != watch.Added || string(got.Data["password"]) != "hunter2" {
		t.Errorf("watch sent %s %v", typ, got.Data)
	}

	// Kube reads what apictl wrote, with the transformer its loader builds from the same file ...
	kubeCtx, cancelKube := context.WithCancel(ctx)
	defer cancelKube()
	kubeCfg, err := kubeconfig.LoadEncryptionConfig(kubeCtx, configPath, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	kube := kubeconfig.StaticTransformers(kubeCfg.Transformers).TransformerForResource(schema.GroupResource{Resource: "secrets"})
	plain, _, err := kube.TransformFromStorage(ctx, raw, value.DefaultContext("/registry/secrets/default/s1"))
	if err != nil || !bytes.Contains(plain, []byte(`"name":"s1"`)) {
		t.Fatalf("kube's transformer read %q, %v", plain, err)
	}
	// ... and apictl reads what kube's transformer wrote, through GET, LIST and watch.
	fromKube := bytes.Replace(bytes.Replace(plain, []byte(`"name":"s1"`), []byte(`"name":"from-kube"`), 1),
		[]byte(base64.StdEncoding.EncodeToString([]byte("hunter2"))), []byte(base64.StdEncoding.EncodeToString([]byte("kube"))), 1)
	stored, err := kube.TransformToStorage(ctx, fromKube, value.DefaultContext("/registry/secrets/default/from-kube"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Put(ctx, "/registry/secrets/default/from-kube", string(stored)); err != nil {
		t.Fatal(err)
	}
	if typ, got := nextSecret(t, w); typ != watch.Added || got.Name != "from-kube" || string(got.Data["password"]) != "kube" {
		t.Errorf("watch sent %s %s %v, want kube's secret", typ, got.Name, got.Data)
	}
	if got, err := c.CoreV1().Secrets("default").Get(ctx, "from-kube", metav1.GetOptions{}); err != nil || string(got.Data["password"]) != "kube" {
		t.Errorf("GET of kube's secret = %v, %v", got, err)
	}
	list, err := c.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 || string(list.Items[0].Data["password"]) != "kube" || string(list.Items[1].Data["password"]) != "hunter2" {
		t.Fatalf("LIST = %v, %v", list, err)
	}

	// A custom resource named in the file is encrypted too; a ConfigMap, not named, is not.
	dyn, err := dynamic.NewForConfig(s.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	gadget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"secret": "plans"}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).
		Namespace("default").Create(ctx, gadget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if raw := rawGet(t, etcd, "/registry/example.com/gadgets/default/g1"); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Errorf("the gadget is stored as %q, want it encrypted", raw[:min(len(raw), 60)])
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"k": "v"}}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if raw := rawGet(t, etcd, "/registry/configmaps/default/plain"); !bytes.HasPrefix(raw, []byte("{")) {
		t.Errorf("the configmap is stored as %q, want plain JSON", raw[:min(len(raw), 60)])
	}

	// Rotation, kube's way: the new key first (the old one still reads), the server reloads the
	// file, and every Secret is rewritten.
	if _, err := c.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s2"},
		StringData: map[string]string{"token": "t"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Renamed into place, so that the server never reads a half-written file.
	if err := os.WriteFile(configPath+".new", []byte(encryptionFile("key2", "key1")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(configPath+".new", configPath); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.Logs.String(), "reloaded the encryption provider config") {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not reload the file within 30s; logs:\n%s", s.Logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	kubectl := testtool.Tool(t, "kubectl")
	script := `"$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" get secrets -A -o json | "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" replace -f -`
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "KUBECTL="+kubectl, "KUBECONFIG_FILE="+s.AdminKubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl get | kubectl replace: %v\n%s", err, out)
	}
	resp, err := etcd.Get(ctx, "/registry/secrets/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) < 3 {
		t.Fatalf("etcd holds %d secrets, want at least 3", len(resp.Kvs))
	}
	for _, kv := range resp.Kvs {
		if !bytes.HasPrefix(kv.Value, []byte("k8s:enc:aescbc:v1:key2:")) {
			t.Errorf("after the rotation %s is stored as %q, want key2", kv.Key, kv.Value[:min(len(kv.Value), 40)])
		}
	}
	for _, ns := range []string{"default", "kube-system"} {
		list, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			t.Errorf("LIST in %s after the rotation: %v, %v", ns, list, err)
		}
	}
}
