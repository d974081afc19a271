package clients

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/internal/testtool"
)

// helmInstall is how CI gets the helm the test is written for (v3.19.0 up to v3.22.0 work).
const helmInstall = "GOBIN=/tmp/apictl-ci-tools go install helm.sh/helm/v3/cmd/helm@v3.22.0"

// helmTimeout bounds each helm command; the commands that wait pass helm the shorter helmWait.
const (
	helmTimeout = 2 * time.Minute
	helmWait    = "60s"
)

const (
	helmNamespace = "helm-demo"
	helmRelease   = "demo"
	helmChartName = "apictl-demo-0.1.0"
)

var (
	helmChart = filepath.Join("testdata", "helm", "chart")
	helmGizmo = schema.GroupVersionResource{Group: "helm.example.com", Version: "v1", Resource: "gizmos"}
)

// helmValues is what the chart renders from; helmDefaults are the chart's values.yaml.
type helmValues struct {
	Greeting, Password, Size, Holder string
	Replicas                         int64
	Verbs                            []string
	Extra                            bool
	// Revision is the release revision the manifest was rendered for: a rollback re-applies the old
	// manifest, so it keeps the revision it rolls back to.
	Revision string
}

var helmDefaults = helmValues{
	Greeting: "hello", Password: "s3cret", Size: "small", Holder: "first",
	Replicas: 1, Verbs: []string{"get"}, Extra: true, Revision: "1",
}

// TestHelm drives helm v3 through a release's life against a server over TLS with the admin's
// kubeconfig: lint and template offline, then install --wait into a namespace it creates, list,
// upgrade with changed values (one object removed), rollback to revision 1 (the object back),
// history, and uninstall. After each step it reads every object of the chart — ConfigMap, Secret
// (data and stringData), ServiceAccount, Role, RoleBinding, Lease and a custom resource — with
// client-go, and the release records helm keeps in Secrets, decoded.
func TestHelm(t *testing.T) {
	if _, err := exec.LookPath("helm"); err != nil {
		t.Logf("helm is not on PATH; CI installs it with: %s", helmInstall)
	}
	h := helmNew(t, testtool.Tool(t, "helm"))
	// The chart's crds/ folder installs the Gizmo CRD through the CRD API; helm waits for it to be
	// Established before it installs the templates.
	srv := servertest.Start(t)
	h.kubeconfig, h.logs = srv.AdminKubeconfig, srv.Logs
	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig)
	dyn := dynamic.NewForConfigOrDie(srv.AdminConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()

	t.Logf("helm %s", strings.TrimSpace(h.run(t, "version", "--short")))
	serverVersion, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	t.Logf("server /version: major %q minor %q gitVersion %q", serverVersion.Major, serverVersion.Minor, serverVersion.GitVersion)

	// Offline: the chart is well-formed and renders one object of each kind.
	if out := h.run(t, "lint", helmChart, "--strict"); !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
		t.Fatalf("helm lint: %s", out)
	}
	// A helm built with go install has no Kubernetes version linked in and assumes v1.20 offline.
	kinds := helmKinds(h.run(t, "template", helmRelease, helmChart, "-n", helmNamespace, "--kube-version", "v1.37.0"))
	wantKinds := []string{"ConfigMap", "ConfigMap", "Gizmo", "Lease", "Role", "RoleBinding", "Secret", "ServiceAccount"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("helm template rendered kinds %v, want %v", kinds, wantKinds)
	}

	t.Run("install", func(t *testing.T) {
		out := h.run(t, "install", helmRelease, helmChart, "-n", helmNamespace, "--create-namespace", "--wait", "--timeout", helmWait)
		helmContains(t, out, "NAME: "+helmRelease, "NAMESPACE: "+helmNamespace, "STATUS: deployed", "REVISION: 1")

		nsObj, err := cs.CoreV1().Namespaces().Get(ctx, helmNamespace, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the namespace --create-namespace made: %v", err)
		}
		if nsObj.Labels["name"] != helmNamespace {
			t.Errorf("namespace %s labels %v, want name=%s", helmNamespace, nsObj.Labels, helmNamespace)
		}
		cm, err := cs.CoreV1().ConfigMaps(helmNamespace).Get(ctx, helmRelease+"-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// What helm learnt from discovery and /version, as the chart rendered it.
		for k, want := range map[string]string{
			"gizmosServed": "true", "leasesServed": "true",
			"kubeMajor": serverVersion.Major, "kubeMinor": serverVersion.Minor,
		} {
			if cm.Data[k] != want {
				t.Errorf("configmap data %s = %q, want %q (server /version %+v)", k, cm.Data[k], want, serverVersion)
			}
		}
		helmCheckObjects(ctx, t, cs, dyn, helmDefaults)
		helmCheckRecords(ctx, t, cs, []string{"deployed"}, helmDefaults)

		var list []map[string]string
		h.runJSON(t, &list, "list", "-A", "-o", "json")
		if len(list) != 1 {
			t.Fatalf("helm list -A: %d releases, want 1: %v", len(list), list)
		}
		got := list[0]
		want := map[string]string{"name": helmRelease, "namespace": helmNamespace, "revision": "1",
			"status": "deployed", "chart": helmChartName, "app_version": "1.0.0"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("helm list: %s = %q, want %q (%v)", k, got[k], v, got)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	upgraded := helmValues{
		Greeting: "bonjour", Password: "t0ps3cret", Size: "large", Holder: "second",
		Replicas: 3, Verbs: []string{"get", "list", "watch"}, Extra: false, Revision: "2",
	}
	t.Run("upgrade", func(t *testing.T) {
		out := h.run(t, "upgrade", helmRelease, helmChart, "-n", helmNamespace, "--wait", "--timeout", helmWait,
			"--set", "greeting=bonjour,password=t0ps3cret,size=large,replicas=3,holder=second,extra=false",
			"--set", "verbs={get,list,watch}")
		helmContains(t, out, "has been upgraded", "STATUS: deployed", "REVISION: 2")
		helmCheckObjects(ctx, t, cs, dyn, upgraded)
		helmCheckRecords(ctx, t, cs, []string{"superseded", "deployed"}, upgraded)

		var values map[string]any
		h.runJSON(t, &values, "get", "values", helmRelease, "-n", helmNamespace, "-o", "json")
		if values["greeting"] != "bonjour" || values["extra"] != false || values["replicas"] != float64(3) {
			t.Errorf("helm get values: %v", values)
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("rollback", func(t *testing.T) {
		out := h.run(t, "rollback", helmRelease, "1", "-n", helmNamespace, "--wait", "--timeout", helmWait)
		helmContains(t, out, "Rollback was a success")
		helmCheckObjects(ctx, t, cs, dyn, helmDefaults)
		helmCheckRecords(ctx, t, cs, []string{"superseded", "superseded", "deployed"}, helmDefaults)

		var history []map[string]any
		h.runJSON(t, &history, "history", helmRelease, "-n", helmNamespace, "-o", "json")
		var got []string
		for _, r := range history {
			got = append(got, fmt.Sprintf("%v %v %v %v", r["revision"], r["status"], r["chart"], r["description"]))
		}
		want := []string{
			"1 superseded " + helmChartName + " Install complete",
			"2 superseded " + helmChartName + " Upgrade complete",
			"3 deployed " + helmChartName + " Rollback to 1",
		}
		if !slices.Equal(got, want) {
			t.Errorf("helm history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("uninstall", func(t *testing.T) {
		out := h.run(t, "uninstall", helmRelease, "-n", helmNamespace, "--wait", "--timeout", helmWait)
		helmContains(t, out, fmt.Sprintf("release %q uninstalled", helmRelease))
		for _, name := range helmObjectNames() {
			if _, err := helmGet(ctx, cs, dyn, name); !apierrors.IsNotFound(err) {
				t.Errorf("%s after helm uninstall: %v, want NotFound", name, err)
			}
		}
		helmCheckRecords(ctx, t, cs, nil, helmValues{})
		var list []map[string]string
		h.runJSON(t, &list, "list", "-A", "-a", "-o", "json")
		if len(list) != 0 {
			t.Errorf("helm list -A -a after uninstall: %v", list)
		}
	})
	t.Logf("helm's whole life cycle took %s", time.Since(start).Round(time.Millisecond))
}

// helmCLI runs helm with a private HOME and helm directories and the server's kubeconfig.
type helmCLI struct {
	bin        string
	env        []string
	kubeconfig string
	logs       fmt.Stringer
}

func helmNew(t *testing.T, bin string) *helmCLI {
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "helm", "data"),
		"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return &helmCLI{bin: bin, env: env}
}

// run runs helm and fails the test, with helm's output and the end of the server's logs, when helm
// fails or outlives helmTimeout.
func (h *helmCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	if h.kubeconfig != "" {
		args = append(args, "--kubeconfig", h.kubeconfig)
	}
	ctx, cancel := context.WithTimeout(context.Background(), helmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		var logs string
		if h.logs != nil {
			logs = helmTail(h.logs.String(), 8000)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("not done within %s", helmTimeout)
		}
		t.Fatalf("helm %s: %v\nstdout:\n%s\nstderr:\n%s\nserver logs (end):\n%s",
			strings.Join(args, " "), err, &stdout, &stderr, logs)
	}
	t.Logf("helm %s (%s):\n%s%s", strings.Join(args, " "), took, &stdout, &stderr)
	return stdout.String()
}

// runJSON runs helm with -o json and decodes what it prints into v.
func (h *helmCLI) runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := h.run(t, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("helm %s printed no JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// helmObjectNames names every object the chart can make, as kind/name.
func helmObjectNames() []string {
	r := helmRelease
	return []string{"ConfigMap/" + r + "-config", "ConfigMap/" + r + "-extra", "Secret/" + r + "-secret",
		"ServiceAccount/" + r + "-sa", "Role/" + r + "-reader", "RoleBinding/" + r + "-reader",
		"Lease/" + r + "-lock", "Gizmo/" + r + "-gizmo"}
}

// helmGet reads one of helmObjectNames and returns its metadata.
func helmGet(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, kindName string) (metav1.Object, error) {
	kind, name, _ := strings.Cut(kindName, "/")
	get := metav1.GetOptions{}
	switch kind {
	case "ConfigMap":
		return cs.CoreV1().ConfigMaps(helmNamespace).Get(ctx, name, get)
	case "Secret":
		return cs.CoreV1().Secrets(helmNamespace).Get(ctx, name, get)
	case "ServiceAccount":
		return cs.CoreV1().ServiceAccounts(helmNamespace).Get(ctx, name, get)
	case "Role":
		return cs.RbacV1().Roles(helmNamespace).Get(ctx, name, get)
	case "RoleBinding":
		return cs.RbacV1().RoleBindings(helmNamespace).Get(ctx, name, get)
	case "Lease":
		return cs.CoordinationV1().Leases(helmNamespace).Get(ctx, name, get)
	case "Gizmo":
		return dyn.Resource(helmGizmo).Namespace(helmNamespace).Get(ctx, name, get)
	}
	return nil, fmt.Errorf("helmGet: unknown kind %s", kind)
}

// helmCheckObjects checks that the chart's objects hold v, and carry helm's ownership metadata.
func helmCheckObjects(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, v helmValues) {
	t.Helper()
	objs := map[string]metav1.Object{}
	complete := true
	for _, name := range helmObjectNames() {
		obj, err := helmGet(ctx, cs, dyn, name)
		switch {
		case name == "ConfigMap/"+helmRelease+"-extra" && !v.Extra:
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s with extra=false: %v, want NotFound", name, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", name, err)
			complete = false
			continue
		}
		objs[name] = obj
		if got := obj.GetLabels()["app.kubernetes.io/managed-by"]; got != "Helm" {
			t.Errorf("%s label app.kubernetes.io/managed-by = %q, want Helm", name, got)
		}
		if got := obj.GetLabels()["app.kubernetes.io/instance"]; got != helmRelease {
			t.Errorf("%s label app.kubernetes.io/instance = %q, want %s", name, got, helmRelease)
		}
		a := obj.GetAnnotations()
		if a["meta.helm.sh/release-name"] != helmRelease || a["meta.helm.sh/release-namespace"] != helmNamespace {
			t.Errorf("%s annotations %v, want meta.helm.sh/release-name=%s and release-namespace=%s", name, a, helmRelease, helmNamespace)
		}
	}
	if !complete {
		return
	}
	r := helmRelease

	helmCheckConfigMap(t, objs, v)

	sec := objs["Secret/"+r+"-secret"].(*corev1.Secret)
	if string(sec.Data["password"]) != v.Password || string(sec.Data["greeting"]) != v.Greeting || len(sec.StringData) != 0 {
		t.Errorf("secret data %q stringData %q, want password=%q and greeting=%q (from stringData) in data", sec.Data, sec.StringData, v.Password, v.Greeting)
	}
	if sec.Type != "Opaque" {
		t.Errorf("secret type %q, want Opaque", sec.Type)
	}

	sa := objs["ServiceAccount/"+r+"-sa"].(*corev1.ServiceAccount)
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("serviceaccount automountServiceAccountToken = %v, want false", sa.AutomountServiceAccountToken)
	}

	role := objs["Role/"+r+"-reader"].(*rbacv1.Role)
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, v.Verbs) ||
		!slices.Equal(role.Rules[0].Resources, []string{"configmaps"}) || !slices.Equal(role.Rules[0].APIGroups, []string{""}) {
		t.Errorf("role rules %+v, want verbs %v on configmaps", role.Rules, v.Verbs)
	}
	rb := objs["RoleBinding/"+r+"-reader"].(*rbacv1.RoleBinding)
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != r+"-reader" || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != r+"-sa" || rb.Subjects[0].Namespace != helmNamespace {
		t.Errorf("rolebinding roleRef %+v subjects %+v", rb.RoleRef, rb.Subjects)
	}

	lease := objs["Lease/"+r+"-lock"].(*coordinationv1.Lease)
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != v.Holder ||
		lease.Spec.LeaseDurationSeconds == nil || *lease.Spec.LeaseDurationSeconds != 15 {
		t.Errorf("lease spec %+v, want holderIdentity %q and leaseDurationSeconds 15", lease.Spec, v.Holder)
	}

	gizmo := objs["Gizmo/"+r+"-gizmo"].(*unstructured.Unstructured)
	spec, _ := gizmo.Object["spec"].(map[string]any)
	if !reflect.DeepEqual(spec, map[string]any{"size": v.Size, "replicas": v.Replicas}) {
		t.Errorf("gizmo spec %#v, want size %q replicas %d", spec, v.Size, v.Replicas)
	}
}

// helmCheckConfigMap checks the values the main ConfigMap and the optional one hold.
func helmCheckConfigMap(t *testing.T, objs map[string]metav1.Object, v helmValues) {
	t.Helper()
	cm := objs["ConfigMap/"+helmRelease+"-config"].(*corev1.ConfigMap)
	if cm.Data["greeting"] != v.Greeting || cm.Data["revision"] != v.Revision {
		t.Errorf("configmap data %v, want greeting %q and revision %q", cm.Data, v.Greeting, v.Revision)
	}
	if v.Extra {
		extra := objs["ConfigMap/"+helmRelease+"-extra"].(*corev1.ConfigMap)
		if !reflect.DeepEqual(extra.Data, map[string]string{"present": "yes"}) {
			t.Errorf("extra configmap data %v, want present=yes", extra.Data)
		}
	}
}

// helmRecord is the part of a release record, as helm stores it, the test reads.
type helmRecord struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Version   int            `json:"version"`
	Config    map[string]any `json:"config"`
	Manifest  string         `json:"manifest"`
	Info      struct {
		Status string `json:"status"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name        string `json:"name"`
			Version     string `json:"version"`
			KubeVersion string `json:"kubeVersion"`
		} `json:"metadata"`
	} `json:"chart"`
}

// helmCheckRecords checks the Secrets helm keeps its release history in: one per revision, in the
// release's namespace, found by helm's labels, each holding the gzipped release record with the
// status statuses[revision-1]; latest is what the last revision rendered.
func helmCheckRecords(ctx context.Context, t *testing.T, cs kubernetes.Interface, statuses []string, latest helmValues) {
	t.Helper()
	list, err := cs.CoreV1().Secrets(helmNamespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + helmRelease})
	if err != nil {
		t.Fatalf("listing helm's release secrets: %v", err)
	}
	var names, wantNames []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	for i := range statuses {
		wantNames = append(wantNames, fmt.Sprintf("sh.helm.release.v1.%s.v%d", helmRelease, i+1))
	}
	sort.Strings(names)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("release secrets selected by owner=helm,name=%s: %v, want %v", helmRelease, names, wantNames)
	}
	for _, s := range list.Items {
		rev := strings.TrimPrefix(s.Name, fmt.Sprintf("sh.helm.release.v1.%s.v", helmRelease))
		n, err := strconv.Atoi(rev)
		if err != nil {
			t.Fatalf("release secret %s: no revision", s.Name)
		}
		want := statuses[n-1]
		if s.Type != "helm.sh/release.v1" {
			t.Errorf("%s type %q, want helm.sh/release.v1", s.Name, s.Type)
		}
		if s.Labels["status"] != want || s.Labels["version"] != rev || s.Labels["owner"] != "helm" || s.Labels["name"] != helmRelease {
			t.Errorf("%s labels %v, want status=%s version=%s owner=helm name=%s", s.Name, s.Labels, want, rev, helmRelease)
		}
		rec, err := helmDecodeRecord(s.Data["release"])
		if err != nil {
			t.Errorf("%s data.release: %v", s.Name, err)
			continue
		}
		if rec.Name != helmRelease || rec.Namespace != helmNamespace || rec.Version != n || rec.Info.Status != want ||
			rec.Chart.Metadata.Name != "apictl-demo" || rec.Chart.Metadata.KubeVersion != ">=1.28.0-0" {
			t.Errorf("%s record: name %q namespace %q version %d status %q chart %+v", s.Name,
				rec.Name, rec.Namespace, rec.Version, rec.Info.Status, rec.Chart.Metadata)
		}
		if n == len(statuses) && !strings.Contains(rec.Manifest, fmt.Sprintf("greeting: %q", latest.Greeting)) {
			t.Errorf("%s manifest lacks greeting %q:\n%s", s.Name, latest.Greeting, rec.Manifest)
		}
	}
}

// helmDecodeRecord undoes helm's encoding of a release record: base64 text of gzipped JSON (inside
// the Secret's own base64, which client-go already undid).
func helmDecodeRecord(data []byte) (*helmRecord, error) {
	gz, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	var rec helmRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return &rec, nil
}

// helmKinds lists the kinds of the documents helm template printed, sorted.
func helmKinds(manifest string) []string {
	var kinds []string
	for _, line := range strings.Split(manifest, "\n") {
		if kind, ok := strings.CutPrefix(line, "kind: "); ok {
			kinds = append(kinds, strings.TrimSpace(kind))
		}
	}
	sort.Strings(kinds)
	return kinds
}

// helmContains fails the test unless out contains each of wants.
func helmContains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("helm printed no %q:\n%s", w, out)
		}
	}
}

// helmTail returns the last n bytes of s, for failure messages.
func helmTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
