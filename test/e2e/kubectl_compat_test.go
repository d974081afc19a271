package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/testtool"
)

// TestKubectlWithDefaultFlags is the kubectl issue's must-show: everyday kubectl commands, with
// kubectl's default flags (strict validation included), against apictl serve with a CRD.
func TestKubectlWithDefaultFlags(t *testing.T) {
	kubectlPath := testtool.Tool(t, "kubectl")
	ports := freePorts(t, 2)
	dir := t.TempDir()
	crd, err := filepath.Abs("testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--api-config", crd)
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	server := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	cache := filepath.Join(t.TempDir(), "cache")
	// kubectlCmd is kubectl on the insecure port, with a private cache and no kubeconfig.
	kubectlCmd := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, kubectlPath, append([]string{"-s", server, "--cache-dir", cache}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
		return cmd
	}
	k := func(stdin string, args ...string) string {
		t.Helper()
		cmd := kubectlCmd(context.Background(), args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "EDITOR="+filepath.Join(dir, "editor.sh"))
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	expect := func(out string, parts ...string) {
		t.Helper()
		for _, part := range parts {
			if !strings.Contains(out, part) {
				t.Errorf("output lacks %q:\n%s", part, out)
			}
		}
	}
	cm := func(value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: \"" + value + "\"\n"
	}
	widget := func(size string) string {
		return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: " + size + "\n  replicas: 1\n"
	}

	// get -w prints changes made by other commands.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := kubectlCmd(ctx, "get", "configmaps", "-w")
	// kubectl writes while the test polls, so the buffer must be locked.
	watched := &syncBuffer{}
	watch.Stdout = watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = watch.Wait() }()

	expect(k(cm("1"), "apply", "-f", "-"), "configmap/app created")
	expect(k(cm("2"), "apply", "-f", "-"), "configmap/app configured") // a strategic merge patch
	expect(k("", "get", "cm", "app", "-o", "jsonpath={.data.a}"), "2")
	expect(k(widget("small"), "apply", "-f", "-"), "widget.example.com/w1 created")
	expect(k(widget("big"), "apply", "-f", "-"), "widget.example.com/w1 configured") // a merge patch
	// kubectl's own manager takes over the client-side apply's fields; another manager then conflicts.
	expect(k(cm("3"), "apply", "--server-side", "-f", "-"), "configmap/app serverside-applied")
	conflict := kubectlCmd(context.Background(), "apply", "--server-side", "--field-manager", "second", "-f", "-")
	conflict.Stdin = strings.NewReader(cm("4"))
	if out, err := conflict.CombinedOutput(); err == nil || !strings.Contains(string(out), `conflict with "kubectl"`) {
		t.Errorf("a second field manager must conflict: %v\n%s", err, out)
	}
	expect(k(cm("4"), "apply", "--server-side", "--field-manager", "second", "--force-conflicts", "-f", "-"), "configmap/app serverside-applied")
	expect(k("", "get", "cm", "app", "-o", "jsonpath={.data.a}"), "4")

	if err := os.WriteFile(filepath.Join(dir, "editor.sh"), []byte("#!/bin/sh\nsed -i 's/a: \"4\"/a: \"edited\"/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	expect(k("", "edit", "cm", "app"), "configmap/app edited")
	expect(k("", "patch", "cm", "app", "--type=json", "-p", `[{"op":"add","path":"/data/j","value":"1"}]`), "patched")
	expect(k("", "patch", "cm", "app", "--type=merge", "-p", `{"data":{"m":"1"}}`), "patched")
	expect(k("", "patch", "cm", "app", "--type=strategic", "-p", `{"data":{"s":"1"}}`), "patched")
	expect(k("", "label", "cm", "app", "tier=web"), "configmap/app labeled")
	expect(k("", "annotate", "cm", "app", "note=hi"), "configmap/app annotated")
	expect(k("", "get", "cm", "app", "-o", "yaml"), `a: edited`, `j: "1"`, `m: "1"`, `s: "1"`, "tier: web", "note: hi")

	expect(k("", "patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`), "patched")
	expect(k("", "wait", "--for=condition=Ready", "widget/w1", "--timeout=20s"), "condition met")
	expect(k("", "scale", "widget", "w1", "--replicas=3"), "widget.example.com/w1 scaled")
	expect(k("", "get", "widget", "w1", "-o", "jsonpath={.spec.replicas}"), "3")
	expect(k("", "explain", "configmap.data"), "KIND:", "ConfigMap", "FIELD: data")
	expect(k("", "explain", "widget.spec"), "size")
	expect(k("", "get", "all"), "w1", "big")

	expect(k("", "delete", "cm", "app"), `configmap "app" deleted`) // waits for the deletion by default
	k("", "create", "configmap", "gone")
	wait := kubectlCmd(context.Background(), "wait", "--for=delete", "cm/gone", "--timeout=20s")
	var waitOut bytes.Buffer
	wait.Stdout, wait.Stderr = &waitOut, &waitOut
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	k("", "delete", "cm", "gone", "--wait=false")
	if err := wait.Wait(); err != nil || !strings.Contains(waitOut.String(), "condition met") {
		t.Errorf("wait --for=delete: %v\n%s", err, waitOut.String())
	}

	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(watched.String(), "app") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(watched.String(), "app") {
		t.Errorf("kubectl get -w did not print the change: %q", watched.String())
	}
}

// waitReady waits until the insecure port's /readyz answers 200.
func waitReady(t *testing.T, insecurePort int) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", insecurePort)
	c := &http.Client{Timeout: 5 * time.Second}
	waitFor(t, 20*time.Second, "readyz", func() bool { code, _, _ := get(c, url); return code == 200 })
}
