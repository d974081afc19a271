package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestSampleAPIServerThroughApictl is issue 15's headline: the upstream k8s.io/sample-apiserver, built
// at the version of go.mod's k8s modules and run unchanged with apictl as its core cluster, serves
// wardle.example.com through apictl's aggregation layer to plain kubectl.
//
// The extension server runs on loopback with its own etcd and certificates made here, deployed as
// its own README says: the upstream manifests give its ServiceAccount the delegated-authentication
// and -authorization rights (TokenReview, SubjectAccessReview, the extension-apiserver-authentication
// ConfigMap), and its kubeconfigs carry that ServiceAccount's token. It is registered with an
// ExternalName Service (EndpointSlices refuse loopback addresses) and one APIService per version,
// verified through their caBundle. kubectl then sees flunders in discovery, creates, lists, watches
// and deletes them, meets the extension server's own admission plugin, and a user without RBAC
// rights is refused by the extension server itself (asked directly with her client certificate) as
// well as through apictl.
func TestSampleAPIServerThroughApictl(t *testing.T) {
	sample := buildSampleAPIServer(t)

	ports := freePorts(t, 3)
	dir := t.TempDir()
	apictl := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--authorization-mode", "RBAC")
	var wardle *process
	defer func() {
		if t.Failed() {
			t.Logf("apictl output:\n%s", apictl.output)
			if wardle != nil {
				t.Logf("sample-apiserver output:\n%s", wardle.output)
			}
		}
	}()
	waitReady(t, ports[1])
	pki := filepath.Join(dir, "apictl.local", "pki")
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	admin := []string{"--kubeconfig", filepath.Join(pki, "admin.kubeconfig")}
	k := func(conn []string, args ...string) string { t.Helper(); return kubectl(t, append(conn, args...)...) }
	expect := func(out string, parts ...string) {
		t.Helper()
		for _, part := range parts {
			if !strings.Contains(out, part) {
				t.Errorf("output lacks %q:\n%s", part, out)
			}
		}
	}
	refused := func(conn []string, want string, args ...string) {
		t.Helper()
		out, ok := kubectlResult(t, append(conn, args...)...)
		if ok || !strings.Contains(out, want) {
			t.Errorf("kubectl %s: ok=%v, want a failure with %q:\n%s", strings.Join(args, " "), ok, want, out)
		}
	}

	// The deployment's identity and rights, from the upstream manifests as they are, except its
	// ClusterRole: upstream's lists the admission configurations of an older release and leaves out
	// MutatingAdmissionPolicies, whose informer then never syncs and whose plugin refuses every write
	// with "not yet ready to handle request" (so on kube-apiserver v1.37.2 too); kube's conformance
	// test grants every admissionregistration.k8s.io resource, and so does this one.
	manifests := filepath.Join(sample.source, "artifacts", "example")
	rbac := filepath.Join(t.TempDir(), "clusterrole.yaml")
	writeFile(t, rbac, sampleClusterRole)
	apply := []string{"apply", "-f", rbac}
	for _, m := range []string{"ns.yaml", "sa.yaml", "auth-delegator.yaml", "auth-reader.yaml", "rbac-bind.yaml"} {
		apply = append(apply, "-f", filepath.Join(manifests, m))
	}
	// What the extension server reads first: the client CA and request-header settings apictl
	// publishes in kube-system (which also means that namespace is there for auth-reader.yaml).
	waitFor(t, 30*time.Second, "kube-system/extension-apiserver-authentication", func() bool {
		_, ok := kubectlResult(t, append(admin, "-n", "kube-system", "get", "configmap", "extension-apiserver-authentication")...)
		return ok
	})
	k(admin, apply...)
	token := strings.TrimSpace(k(admin, "-n", "wardle", "create", "token", "apiserver", "--duration", "1h"))
	kubeconfig := writeTokenKubeconfig(t, server, filepath.Join(pki, "ca.crt"), token)

	// The extension server: its own etcd, its serving certificate for the name the aggregator
	// verifies, apictl as its core cluster.
	etcd := startEtcd(t)
	servingCerts := servingPKI(t, "api.wardle.svc")
	samplePort := ports[2]
	wardle = startProgram(t, t.TempDir(), sample.binary,
		"--secure-port", fmt.Sprint(samplePort), "--bind-address", "127.0.0.1",
		"--etcd-servers", etcd,
		"--tls-cert-file", servingCerts.ServingCert, "--tls-private-key-file", servingCerts.ServingKey,
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		// apictl serves no flowcontrol.apiserver.k8s.io, which priority and fairness watches.
		"--enable-priority-and-fairness=false")
	sampleURL := fmt.Sprintf("https://127.0.0.1:%d", samplePort)
	// Ready means its informers on apictl synced: every admissionregistration.k8s.io resource it
	// watches is served, and it read extension-apiserver-authentication.
	waitHealthy(t, wardle, sampleURL+"/readyz?verbose", servingCerts.CACert, 30*time.Second)

	caBundle, err := os.ReadFile(servingCerts.CACert)
	if err != nil {
		t.Fatal(err)
	}
	registration := filepath.Join(t.TempDir(), "registration.yaml")
	writeFile(t, registration, wardleRegistration(samplePort, caBundle))
	k(admin, "apply", "-f", registration)
	apiServices := []string{"apiservice/v1alpha1.wardle.example.com", "apiservice/v1beta1.wardle.example.com"}
	if out, ok := kubectlResult(t, append(admin, append([]string{"wait", "--for=condition=Available", "--timeout=60s"}, apiServices...)...)...); !ok {
		status, _ := kubectlResult(t, append(admin, append([]string{"get", "-o", "yaml"}, apiServices...)...)...)
		t.Fatalf("the APIServices are not Available: %s\n%s", out, status)
	}

	// Discovery: flunders at the preferred version, fischers at the only one that has them.
	resources := k(admin, "api-resources", "--api-group", "wardle.example.com")
	expectRow(t, resources, "flunders", "wardle.example.com/v1beta1", "true", "Flunder")
	expectRow(t, resources, "fischers", "wardle.example.com/v1alpha1", "false", "Fischer")
	expect(k(admin, "api-versions"), "wardle.example.com/v1alpha1", "wardle.example.com/v1beta1")

	// The upstream example flunder, through kubectl.
	flunders := filepath.Join(sample.source, "artifacts", "flunders", "01-flunder.yaml")
	expect(k(admin, "-n", "default", "create", "-f", flunders), "flunder.wardle.example.com/my-first-flunder created")
	expect(k(admin, "-n", "default", "get", "flunders"), "NAME", "my-first-flunder")
	expect(k(admin, "-n", "default", "get", "flunder", "my-first-flunder", "-o", "yaml"),
		"apiVersion: wardle.example.com/v1beta1", "kind: Flunder", "sample-label: \"true\"", "resourceVersion:", "uid:")
	expect(k(admin, "get", "flunders", "-A"), "default", "my-first-flunder")

	// A watch streams through the proxy: the list part proves it is established.
	watch := startKubectl(t, append(admin, "-n", "default", "get", "flunders", "-w", "-o", "name")...)
	watch.waitLine(t, "flunder.wardle.example.com/my-first-flunder")
	objects := t.TempDir()
	writeFile(t, filepath.Join(objects, "watched.yaml"), flunderYAML("watched"))
	k(admin, "-n", "default", "create", "-f", filepath.Join(objects, "watched.yaml"))
	watch.waitLine(t, "flunder.wardle.example.com/watched")

	// The extension server's own admission: a Fischer bans a flunder name.
	writeFile(t, filepath.Join(objects, "fischer.yaml"), "apiVersion: wardle.example.com/v1alpha1\nkind: Fischer\nmetadata:\n  name: rules\ndisallowedFlunders:\n- banned\n")
	expect(k(admin, "create", "-f", filepath.Join(objects, "fischer.yaml")), "fischer.wardle.example.com/rules created")
	writeFile(t, filepath.Join(objects, "banned.yaml"), flunderYAML("banned"))
	const banned = `Error from server (Forbidden): error when creating "` // the file name follows
	waitFor(t, 15*time.Second, "the extension server to ban the flunder name", func() bool {
		out, ok := kubectlResult(t, append(admin, "-n", "default", "create", "-f", filepath.Join(objects, "banned.yaml"))...)
		if ok {
			k(admin, "-n", "default", "delete", "flunder", "banned")
			return false
		}
		return strings.Contains(out, banned) &&
			strings.Contains(out, `flunders.wardle.example.com "banned" is forbidden: this name may not be used, please change the resource name`)
	})

	// A user without RBAC rights: refused through apictl, and by the extension server itself, which
	// asks apictl with a SubjectAccessReview after authenticating her certificate with the client CA
	// from extension-apiserver-authentication.
	issue := exec.Command(binary, "certs", "client", "alice", "--groups", "dev", "--cert-dir", pki, "--server", server)
	if out, err := issue.CombinedOutput(); err != nil {
		t.Fatalf("apictl certs client alice: %v\n%s", err, out)
	}
	alice := []string{"--kubeconfig", filepath.Join(pki, "alice.kubeconfig")}
	const aliceForbidden = `flunders.wardle.example.com is forbidden: User "alice" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "default"`
	refused(alice, aliceForbidden, "-n", "default", "get", "flunders")
	direct := func(cert string) []string {
		return []string{"-s", sampleURL, "--certificate-authority", servingCerts.CACert,
			"--client-certificate", filepath.Join(pki, cert+".crt"), "--client-key", filepath.Join(pki, cert+".key")}
	}
	const flundersPath = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders"
	refused(direct("alice"), "Error from server (Forbidden): "+aliceForbidden, "get", "--raw", flundersPath)
	expect(k(direct("admin"), "get", "--raw", flundersPath), `"kind":"FlunderList"`, `"name":"my-first-flunder"`)

	// Once RBAC grants it, she reads flunders through apictl.
	k(admin, "create", "clusterrole", "flunder-reader", "--verb=get,list,watch", "--resource=flunders.wardle.example.com")
	k(admin, "-n", "default", "create", "rolebinding", "alice-flunders", "--clusterrole=flunder-reader", "--user=alice")
	waitFor(t, 30*time.Second, "alice to read a flunder", func() bool {
		out, ok := kubectlResult(t, append(alice, "-n", "default", "get", "flunder", "my-first-flunder", "-o", "name")...)
		return ok && strings.TrimSpace(out) == "flunder.wardle.example.com/my-first-flunder"
	})
	refused(alice, `flunders.wardle.example.com "x" is forbidden: User "alice" cannot delete resource "flunders" in API group "wardle.example.com" in the namespace "default"`,
		"-n", "default", "delete", "flunder", "x")

	// Delete, through the proxy.
	expect(k(admin, "-n", "default", "delete", "flunder", "watched"), `flunder.wardle.example.com "watched" deleted`)
	expect(k(admin, "-n", "default", "delete", "-f", flunders), `flunder.wardle.example.com "my-first-flunder" deleted`)
	refused(admin, `Error from server (NotFound): flunders.wardle.example.com "my-first-flunder" not found`,
		"-n", "default", "get", "flunder", "my-first-flunder")
	expect(k(admin, "delete", "fischer", "rules"), `fischer.wardle.example.com "rules" deleted`)
}

// sampleClusterRole is what the extension server reads from its core cluster, as kube's conformance
// test (test/e2e/apimachinery/aggregator.go) grants it.
const sampleClusterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: aggregated-apiserver-clusterrole
rules:
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
- apiGroups: [admissionregistration.k8s.io]
  resources: ["*"]
  verbs: [get, list, watch]
- apiGroups: [flowcontrol.apiserver.k8s.io]
  resources: [prioritylevelconfigurations, flowschemas]
  verbs: [list, watch]
`

// expectRow fails the test unless a line of kubectl's table holds every field, in order, as whole
// columns.
func expectRow(t *testing.T, table string, fields ...string) {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		cols := strings.Fields(line)
		i := 0
		for _, c := range cols {
			if i < len(fields) && c == fields[i] {
				i++
			}
		}
		if len(cols) > 0 && cols[0] == fields[0] && i == len(fields) {
			return
		}
	}
	t.Errorf("no row %q in:\n%s", strings.Join(fields, " "), table)
}

// flunderYAML is a flunder of the preferred version.
func flunderYAML(name string) string {
	return "apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: " + name + "\n"
}

// wardleRegistration is the Service and the two APIServices that put the extension server behind
// apictl: an ExternalName Service for localhost (EndpointSlices refuse loopback addresses), and the
// versions served by the server at port, whose certificate caBundle verifies.
func wardleRegistration(port int, caBundle []byte) string {
	ca := base64.StdEncoding.EncodeToString(caBundle)
	apiService := func(version string, priority int) string {
		return fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: %[1]s.wardle.example.com
spec:
  group: wardle.example.com
  version: %[1]s
  groupPriorityMinimum: 1000
  versionPriority: %[2]d
  service:
    name: api
    namespace: wardle
    port: %[3]d
  caBundle: %[4]s
`, version, priority, port, ca)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: wardle
spec:
  type: ExternalName
  externalName: localhost
  ports:
  - name: https
    port: %d
    protocol: TCP
---
`, port) + apiService("v1alpha1", 15) + "---\n" + apiService("v1beta1", 20)
}

// writeTokenKubeconfig writes a kubeconfig for server, verified by caFile, authenticating with token.
func writeTokenKubeconfig(t *testing.T, server, caFile, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["apictl"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	cfg.AuthInfos["wardle"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["wardle"] = &clientcmdapi.Context{Cluster: "apictl", AuthInfo: "wardle"}
	cfg.CurrentContext = "wardle"
	path := filepath.Join(t.TempDir(), "wardle.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
