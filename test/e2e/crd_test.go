package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/testtool"
)

// TestCRDLifecycleWithKubectl is issue 12's first must-show, with stock kubectl against a running
// `apictl serve`: a CRD applied is served within a second of Established (get, create, apply, patch,
// explain, get -w, delete, and `apictl routes --kubeconfig`); an edit adding a version, a printer
// column and the status subresource takes effect; a name conflict is NamesAccepted=False; a
// non-structural schema is a 422 listing every problem; and deleting the CRD deletes its instances
// first.
func TestCRDLifecycleWithKubectl(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := serveReady(t, dir, ports)
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	kubeconfig := filepath.Join(dir, "apictl.local", "pki", "admin.kubeconfig")
	conn := []string{"--kubeconfig", kubeconfig}
	k := func(args ...string) string { t.Helper(); return kubectl(t, append(conn, args...)...) }
	expect := func(out string, parts ...string) {
		t.Helper()
		for _, part := range parts {
			if !strings.Contains(out, part) {
				t.Errorf("output lacks %q:\n%s", part, out)
			}
		}
	}
	data := func(name string) string { return filepath.Join("testdata", "crd", name) }

	expect(k("apply", "-f", data("widgets-v1.yaml")), "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created")
	expect(k("wait", "--for", "condition=Established", "crd/widgets.example.com", "--timeout", "10s"), "condition met")
	established := time.Now()
	// Every kubectl call reads discovery afresh (its own cache dir): the resource is known at once.
	expect(k("create", "-f", data("widget-a.yaml")), "widget.example.com/a created")
	if d := time.Since(established); d > time.Second+kubectlStart {
		t.Errorf("the first create of a widget finished %v after Established", d)
	}
	expect(k("get", "widgets"), "NAME", "a")
	expect(k("get", "wd", "a", "-o", "yaml"), "size: 3", "color: red", "apiVersion: example.com/v1")
	expect(k("patch", "widget", "a", "--type", "merge", "-p", `{"spec":{"size":4}}`), "widget.example.com/a patched")
	applied := filepath.Join(t.TempDir(), "b.yaml")
	writeFile(t, applied, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: b\n  namespace: default\nspec:\n  size: 7\n")
	expect(k("apply", "--server-side", "-f", applied), "widget.example.com/b serverside-applied")
	expect(k("explain", "widgets.spec.size"), "How big the widget is.")
	expect(k("api-resources", "--api-group", "example.com"), "widgets", "wd", "Widget")
	routes := run(t, binary, "routes", "--kubeconfig", kubeconfig, "--group", "example.com")
	expect(routes, "/apis/example.com/v1/namespaces/{namespace}/widgets")

	// A watch sees what is created after it started.
	watch := startKubectl(t, append(conn, "get", "widgets", "-w", "--no-headers", "-o", "custom-columns=NAME:.metadata.name")...)
	watch.waitLine(t, "a")
	writeFile(t, applied, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: c\n  namespace: default\nspec:\n  size: 1\n")
	expect(k("create", "-f", applied), "widget.example.com/c created")
	watch.waitLine(t, "c")
	expect(k("delete", "widget", "c"), `widget.example.com "c" deleted`)
	if out, ok := kubectlResult(t, append(conn, "get", "widget", "c")...); ok || !strings.Contains(out, "NotFound") {
		t.Errorf("widget c after its delete: %s", out)
	}

	// The edit: a second version, a printer column and the status subresource, each live.
	expect(k("apply", "-f", data("widgets-v2.yaml")), "customresourcedefinition.apiextensions.k8s.io/widgets.example.com configured")
	waitFor(t, 5*time.Second, "widgets.v2 served", func() bool {
		_, ok := kubectlResult(t, append(conn, "get", "widgets.v2.example.com", "a")...)
		return ok
	})
	expect(k("get", "widgets", "a"), "SIZE", "4")
	// spec.color became a selectable field.
	selected := k("get", "widgets", "--field-selector", "spec.color=red", "-o", "name")
	if strings.TrimSpace(selected) != "widget.example.com/a" {
		t.Errorf("--field-selector spec.color=red selected:\n%s", selected)
	}
	expect(k("get", "widgets.v2.example.com", "a", "-o", "yaml"), "apiVersion: example.com/v2", "size: 4")
	expect(k("patch", "widget", "a", "--subresource", "status", "--type", "merge", "-p", `{"status":{"ready":true}}`), "widget.example.com/a patched")
	expect(k("get", "widget", "a", "-o", "jsonpath={.status.ready}"), "true")
	// With the status subresource, the main resource no longer writes status.
	expect(k("patch", "widget", "a", "--type", "merge", "-p", `{"status":{"ready":false}}`), "widget.example.com/a patched")
	expect(k("get", "widget", "a", "-o", "jsonpath={.status.ready}"), "true")
	watch.waitExit(t) // the resource changed: its watches end, so that clients list again

	// A name another CRD holds.
	expect(k("apply", "-f", data("gizmos-conflict.yaml")), "customresourcedefinition.apiextensions.k8s.io/gizmos.example.com created")
	expect(k("wait", "--for", "condition=NamesAccepted=False", "crd/gizmos.example.com", "--timeout", "10s"), "condition met")
	expect(k("get", "crd", "gizmos.example.com", "-o", "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].message}"), `"Widget" is already in use`)
	if out, ok := kubectlResult(t, append(conn, "get", "gizmos")...); ok {
		t.Errorf("gizmos are served although their names are not accepted:\n%s", out)
	}

	// A non-structural schema: every problem at once.
	out, ok := kubectlResult(t, append(conn, "apply", "-f", data("nonstructural.yaml"))...)
	if ok {
		t.Fatalf("a non-structural CRD was accepted:\n%s", out)
	}
	// kube's own validation, which names a single version's schema as spec.validation.
	expect(out, `The CustomResourceDefinition "bad.example.com" is invalid`,
		`spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`,
		`spec.validation.openAPIV3Schema.properties[other].type: Unsupported value: "strange"`)

	// Delete: instances first, then the CRD, then the routes.
	expect(k("delete", "crd", "widgets.example.com", "--timeout", "30s"), `customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted`)
	out, ok = kubectlResult(t, append(conn, "get", "widgets")...)
	if ok {
		t.Errorf("widgets still served after their CRD was deleted:\n%s", out)
	}
	expect(out, `the server doesn't have a resource type "widgets"`)
	// With widgets gone, gizmos get the kind Widget they asked for: kube's naming is first come,
	// first served. Delete them too, then create widgets again: the resource has none of the old
	// instances, which were deleted, not hidden.
	expect(k("wait", "--for", "condition=Established", "crd/gizmos.example.com", "--timeout", "10s"), "condition met")
	expect(k("delete", "crd", "gizmos.example.com"), "deleted")
	expect(k("apply", "-f", data("widgets-v1.yaml")), "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created")
	expect(k("wait", "--for", "condition=Established", "crd/widgets.example.com", "--timeout", "10s"), "condition met")
	expect(k("get", "widgets", "-A"), "No resources found")
}

// kubectlStart allows for kubectl's own start-up and discovery in the Established-to-served check.
const kubectlStart = 2 * time.Second

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a program and returns its output, failing the test if it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlProcess is a long-running kubectl, such as get -w, whose output lines arrive on lines.
type kubectlProcess struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
}

func startKubectl(t *testing.T, args ...string) *kubectlProcess {
	t.Helper()
	cmd := exec.Command(testtool.Tool(t, "kubectl"), append([]string{"--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &kubectlProcess{cmd: cmd, lines: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- strings.TrimSpace(s.Text())
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *kubectlProcess) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if l == want {
				return
			}
		case <-p.done:
			t.Fatalf("kubectl ended before printing %q", want)
		case <-timeout:
			t.Fatalf("kubectl did not print %q within 10s", want)
		}
	}
}

func (p *kubectlProcess) waitExit(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("kubectl %s still running 10s after its resource changed", strings.Join(p.cmd.Args[1:], " "))
	}
}
