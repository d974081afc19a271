package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// gatewayAPICases is where kube's own tests keep the Gateway API's CRDs (460 KB of schema in four
// CRDs, with hundreds of CEL rules: among the biggest CRDs operators ship) and example objects, valid
// and invalid. The module is a dependency, so its files are in the module cache on every machine
// that builds apictl.
func gatewayAPICases(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/apiextensions-apiserver").Output()
	if err != nil {
		t.Fatalf("locating k8s.io/apiextensions-apiserver: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "ratcheting_test_cases")
	if _, err := os.Stat(filepath.Join(dir, "crds", "standard-install.yaml")); err != nil {
		t.Fatalf("the Gateway API CRDs are not in the module cache: %v", err)
	}
	return dir
}

// yamlFiles lists the YAML files under dir, sorted.
func yamlFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// TestLargeRealWorldCRDs is issue 12's must-show for big CRDs: the Gateway API's standard install
// goes in with `kubectl apply --server-side`, its documented example objects are accepted, and the
// invalid ones kube's tests keep are refused with a 422 that says why.
func TestLargeRealWorldCRDs(t *testing.T) {
	cases := gatewayAPICases(t)
	ports := freePorts(t, 2)
	dir := t.TempDir()
	p := serveReady(t, dir, ports)
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	conn := []string{"--kubeconfig", filepath.Join(dir, "apictl.local", "pki", "admin.kubeconfig")}
	k := func(args ...string) string { t.Helper(); return kubectl(t, append(conn, args...)...) }

	out := k("apply", "--server-side", "-f", filepath.Join(cases, "crds", "standard-install.yaml"))
	for _, name := range []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"} {
		if !strings.Contains(out, name+".gateway.networking.k8s.io serverside-applied") {
			t.Errorf("%s not applied:\n%s", name, out)
		}
	}
	k("wait", "--for", "condition=Established", "crd", "--all", "--timeout", "30s")

	// The examples name their namespaces; create them first.
	namespaces := map[string]bool{}
	nsRe := regexp.MustCompile(`(?m)^\s+namespace:\s*(\S+)`)
	for _, f := range append(yamlFiles(t, filepath.Join(cases, "valid")), yamlFiles(t, filepath.Join(cases, "invalid"))...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range nsRe.FindAllStringSubmatch(string(b), -1) {
			namespaces[m[1]] = true
		}
	}
	for ns := range namespaces {
		if _, ok := kubectlResult(t, append(conn, "create", "namespace", ns)...); !ok {
			t.Logf("namespace %s not created (it may exist already)", ns)
		}
	}

	for _, f := range yamlFiles(t, filepath.Join(cases, "valid")) {
		if strings.HasSuffix(f, "0-namespaces.yaml") {
			continue
		}
		if out, ok := kubectlResult(t, append(conn, "apply", "--server-side", "-f", f)...); !ok {
			t.Errorf("valid example %s refused:\n%s", strings.TrimPrefix(f, cases), out)
		}
	}
	for _, f := range yamlFiles(t, filepath.Join(cases, "invalid")) {
		out, ok := kubectlResult(t, append(conn, "create", "-f", f)...)
		if ok {
			t.Errorf("invalid example %s accepted:\n%s", strings.TrimPrefix(f, cases), out)
			continue
		}
		if !strings.Contains(out, "is invalid") {
			t.Errorf("invalid example %s refused without saying why:\n%s", strings.TrimPrefix(f, cases), out)
		}
	}
}
