package e2e

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/golden"
)

// TestAuditLog is issue 14's audit must-show: with a policy of all four levels, real kubectl's
// create, get, watch and delete (and impersonated, forbidden and unauthenticated requests)
// produce kube's events, compared with a golden file that ignores IDs, timestamps and other
// volatile values.
func TestAuditLog(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("carol-secret-token,carol,carol-uid,readers\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	policy, err := filepath.Abs("testdata/audit/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit", "audit.log")
	p := startServeIn(t, dir, "--secure-port", fmt.Sprint(ports[0]), "--insecure-port", fmt.Sprint(ports[1]),
		"--bind-address", "127.0.0.1", "--authorization-mode", "RBAC", "--token-auth-file", tokens,
		"--audit-policy-file", policy, "--audit-log-path", logPath)
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	pki := filepath.Join(dir, "apictl.local", "pki")
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	admin := []string{"--kubeconfig", filepath.Join(pki, "admin.kubeconfig")}
	withToken := func(token string) []string {
		return []string{"-s", server, "--certificate-authority", filepath.Join(pki, "ca.crt"), "--token", token}
	}
	k := func(conn []string, args ...string) string { t.Helper(); return kubectl(t, append(conn, args...)...) }
	refused := func(conn []string, args ...string) {
		t.Helper()
		if out, ok := kubectlResult(t, append(conn, args...)...); ok {
			t.Errorf("kubectl %s succeeded:\n%s", strings.Join(args, " "), out)
		}
	}

	k(admin, "create", "namespace", "audited")
	k(admin, "-n", "audited", "create", "configmap", "app", "--from-literal=a=1")
	k(admin, "-n", "audited", "get", "configmap", "app")
	k(admin, "-n", "audited", "create", "secret", "generic", "key", "--from-literal=k=v")
	// A watch that the server ends after two seconds: RequestReceived, ResponseStarted, ResponseComplete.
	k(admin, "-n", "audited", "get", "configmap", "app", "--watch", "--request-timeout=2s")
	k(admin, "-n", "audited", "delete", "configmap", "app")
	k(admin, "-n", "audited", "delete", "secret", "key")
	refused(admin, "-n", "audited", "get", "configmap", "app", "--as", "carol")
	refused(withToken("carol-secret-token"), "-n", "audited", "get", "secrets")

	// kubectl stops at discovery (not audited here) when its token is wrong: ask for configmaps directly.
	// The Audit-Id response header names the event; a client's own Audit-ID is kept.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for i, token := range []string{"wrong-token", "carol-secret-token"} {
		req, _ := http.NewRequest("GET", server+"/api/v1/namespaces/audited/configmaps", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("User-Agent", "audit-e2e")
		if i == 1 {
			req.Header.Set("Audit-ID", "my-audit-id")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Header.Get("Audit-Id")
		switch {
		case i == 0 && (resp.StatusCode != http.StatusUnauthorized || len(id) != 36):
			t.Errorf("with a wrong token: %d, Audit-Id %q; want 401 and a generated ID", resp.StatusCode, id)
		case i == 1 && id != "my-audit-id":
			t.Errorf("Audit-Id = %q, want the request's my-audit-id", id)
		}
	}

	var events []map[string]any
	waitFor(t, 5*time.Second, "the audit event of the last request", func() bool {
		events = readEvents(t, logPath)
		return len(events) > 0 && events[len(events)-1]["auditID"] == "my-audit-id"
	})
	var b strings.Builder
	for _, ev := range events {
		if ua, _ := ev["userAgent"].(string); !strings.HasPrefix(ua, "kubectl/") && ua != "audit-e2e" {
			continue // the server's own requests, if any: not what this test is about
		}
		normalizeEvent(ev)
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "audit/kubectl-events.json", b.String())
}

// readEvents parses the audit log's JSON lines.
func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []map[string]any
	s := bufio.NewScanner(f)
	s.Buffer(nil, 16<<20)
	for s.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(s.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line %q: %v", s.Text(), err)
		}
		events = append(events, ev)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

// volatileKeys hold values that change from run to run.
var volatileKeys = map[string]bool{"auditID": true, "requestReceivedTimestamp": true, "stageTimestamp": true,
	"uid": true, "resourceVersion": true, "creationTimestamp": true}

var (
	kubectlVersion = regexp.MustCompile(`^kubectl/.*`)
	age            = regexp.MustCompile(`^[0-9]+[smhd]$`)
)

// normalizeEvent replaces what changes between runs: IDs, times, versions, kubectl's version, ages
// in table cells. The user's uid stays when it is not generated.
func normalizeEvent(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch s, isString := x.(string); {
			case volatileKeys[k] && isString && s != "" && !strings.HasSuffix(s, "-uid"):
				v[k] = "<" + k + ">"
			case k == "userAgent" && isString:
				v[k] = kubectlVersion.ReplaceAllString(s, "kubectl/<version>")
			case k == "cells":
				for i, cell := range x.([]any) {
					if s, ok := cell.(string); ok && age.MatchString(s) {
						x.([]any)[i] = "<age>"
					}
				}
			default:
				normalizeEvent(x)
			}
		}
	case []any:
		for _, x := range v {
			normalizeEvent(x)
		}
	}
}

// TestAuditLogRotation: with --audit-log-maxsize 1 (megabyte), many large events rotate the log into
// timestamped backups as kube's (lumberjack) does, keeping --audit-log-maxbackup of them, and no event
// is split across files.
func TestAuditLogRotation(t *testing.T) {
	ports := freePorts(t, 2)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "audit")
	p := startServeIn(t, dir, "--secure-port", "0", "--insecure-port", fmt.Sprint(ports[1]),
		"--audit-policy-file", policy, "--audit-log-path", filepath.Join(logDir, "audit.log"),
		"--audit-log-maxsize", "1", "--audit-log-maxbackup", "2")
	waitReady(t, ports[1])
	defer func() {
		if t.Failed() {
			t.Logf("server output:\n%s", p.output)
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces/default/configmaps", ports[1])
	// A 100 KB object, read back 40 times at RequestResponse: about 4 MB of events.
	body := fmt.Sprintf(`{"metadata":{"name":"big"},"data":{"k":%q}}`, strings.Repeat("x", 100<<10))
	resp, err := http.Post(base, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s", resp.Status)
	}
	for range 40 {
		resp, err := http.Get(base + "/big")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	backup := regexp.MustCompile(`^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$`)
	var backups []string
	// lumberjack removes the backups beyond the limit in the background.
	waitFor(t, 10*time.Second, "two backups", func() bool {
		entries, err := os.ReadDir(logDir)
		if err != nil {
			t.Fatal(err)
		}
		backups = backups[:0]
		for _, e := range entries {
			if backup.MatchString(e.Name()) {
				backups = append(backups, e.Name())
			}
		}
		return len(backups) == 2
	})
	for _, name := range append(backups, "audit.log") {
		path := filepath.Join(logDir, name)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over --audit-log-maxsize", name, info.Size())
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, info.Mode().Perm())
		}
		if len(readEvents(t, path)) == 0 { // readEvents fails the test on a partial line
			t.Errorf("%s has no events", name)
		}
	}
}
