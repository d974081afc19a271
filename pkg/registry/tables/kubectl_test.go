package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/internal/testtool"
	"github.com/apictl/apictl/pkg/routes"
)

// TestKubectlGet runs the real kubectl get against a small server that answers lists, gets and
// watches with this package's tables, and compares what kubectl prints with testdata/kubectl. Each
// file there is a command line ("$ kubectl get ...") followed by kubectl's output; the server holds
// the objects of the list cases under testdata/cases. -update rewrites the output part.
func TestKubectlGet(t *testing.T) {
	kubectl := testtool.Tool(t, "kubectl")
	srv := newTableServer(t)
	kubeconfig := writeKubeconfig(t, srv.URL)
	files, err := filepath.Glob(filepath.Join("testdata", "kubectl", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases under testdata/kubectl")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			head, want, args := parseKubectlCase(t, string(data))
			got := runKubectl(t, kubectl, kubeconfig, args)
			if *update {
				if err := os.WriteFile(file, []byte(head+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("kubectl %s prints (if the change is intended, run go test ./pkg/registry/tables -update):\n%s\nwant:\n%s",
					strings.Join(args, " "), got, want)
			}
		})
	}
	srv.checkAsked(t)
}

// parseKubectlCase splits a case into its head (comments and the command line), the expected
// output, and kubectl's arguments.
func parseKubectlCase(t *testing.T, data string) (head, want string, args []string) {
	for len(data) > 0 {
		line, rest, _ := strings.Cut(data, "\n")
		head += line + "\n"
		data = rest
		if cmd, ok := strings.CutPrefix(line, "$ kubectl "); ok {
			return head, data, strings.Fields(cmd)
		}
	}
	t.Fatal(`the case has no "$ kubectl" line`)
	return "", "", nil
}

func runKubectl(t *testing.T, kubectl, kubeconfig string, args []string) string {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := filepath.Dir(kubeconfig)
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeKubeconfig(t *testing.T, server string) string {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q}}]
users: [{name: test, user: {}}]
contexts: [{name: test, context: {cluster: test, user: test, namespace: default}}]
current-context: test
`, server)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tableServer answers discovery from the test API and reads of its resources with tables. It
// insists on being asked for a Table, as kubectl asks, and notes each includeObject it is sent.
type tableServer struct {
	*httptest.Server
	disc    *routes.Discovery
	convs   map[schema.GroupVersionResource]*Converter
	objects map[schema.GroupVersionResource][]runtime.Object

	mu       sync.Mutex
	problems []string
	included map[metav1.IncludeObjectPolicy]bool
}

func newTableServer(t *testing.T) *tableServer {
	api := testAPI(t)
	convs, err := ForAPI(api, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	s := &tableServer{
		disc:     routes.NewDiscovery(api, routes.DiscoveryOptions{}),
		convs:    convs,
		objects:  caseObjects(t, api),
		included: map[metav1.IncludeObjectPolicy]bool{},
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// caseObjects are the objects of the golden list cases that keep the default includeObject, by
// resource.
func caseObjects(t *testing.T, api *routes.API) map[schema.GroupVersionResource][]runtime.Object {
	out := map[schema.GroupVersionResource][]runtime.Object{}
	files, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		input, _, _ := strings.Cut(string(data), wantMarker)
		docs := strings.Split(input, "\n---\n")
		var h caseHeader
		if err := yaml.UnmarshalStrict([]byte(docs[0]), &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if (h.Mode != "" && h.Mode != "list") || h.IncludeObject != "" || len(docs) < 2 {
			continue
		}
		gvr := parseGVR(t, h.Resource)
		res, _ := api.Resource(gvr.Group, gvr.Version, gvr.Resource)
		for _, doc := range docs[1:] {
			out[gvr] = append(out[gvr], decodeObject(t, res, []byte(doc)))
		}
	}
	return out
}

func (s *tableServer) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// checkAsked fails the test for requests the server could not answer as kube would, and makes sure
// the cases made kubectl ask for both the default metadata rows and whole objects.
func (s *tableServer) checkAsked(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.problems {
		t.Error(p)
	}
	if !s.included[""] || !s.included[metav1.IncludeObject] {
		t.Errorf("kubectl asked for includeObject %v; the cases should make it ask for the default and for Object", s.included)
	}
}

func (s *tableServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var gv schema.GroupVersion
	var rest []string
	switch {
	case r.URL.Path == "/api":
		writeJSON(w, http.StatusOK, s.disc.APIVersions)
		return
	case r.URL.Path == "/apis":
		writeJSON(w, http.StatusOK, &s.disc.GroupList)
		return
	case segs[0] == "api" && len(segs) >= 2:
		gv, rest = schema.GroupVersion{Version: segs[1]}, segs[2:]
	case segs[0] == "apis" && len(segs) == 2:
		if g, ok := s.disc.Groups[segs[1]]; ok {
			writeJSON(w, http.StatusOK, g)
			return
		}
	case segs[0] == "apis" && len(segs) >= 3:
		gv, rest = schema.GroupVersion{Group: segs[1], Version: segs[2]}, segs[3:]
	}
	if gv.Version == "" {
		writeJSON(w, http.StatusNotFound, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path).Status())
		return
	}
	if len(rest) == 0 {
		writeJSON(w, http.StatusOK, s.disc.ResourceLists[gv])
		return
	}
	namespace := ""
	if rest[0] == "namespaces" && len(rest) >= 3 {
		namespace, rest = rest[1], rest[2:]
	}
	name := ""
	if len(rest) > 1 {
		name = rest[1]
	}
	s.serveResource(w, r, gv.WithResource(rest[0]), namespace, name)
}

func (s *tableServer) serveResource(w http.ResponseWriter, r *http.Request, gvr schema.GroupVersionResource, namespace, name string) {
	conv, ok := s.convs[gvr]
	if !ok {
		writeJSON(w, http.StatusNotFound, apierrors.NewNotFound(gvr.GroupResource(), name).Status())
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "as=Table;v=v1;g=meta.k8s.io") {
		s.problem("%s %s asks for %q, not a Table", r.Method, r.URL, r.Header.Get("Accept"))
		writeJSON(w, http.StatusNotAcceptable, apierrors.NewBadRequest("ask for a Table").Status())
		return
	}
	opts, err := ParseOptions(r.URL.Query())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, err.(apierrors.APIStatus).Status())
		return
	}
	s.mu.Lock()
	s.included[opts.IncludeObject] = true
	s.mu.Unlock()

	var objs []runtime.Object
	for _, o := range s.objects[gvr] {
		m, _ := meta.Accessor(o)
		if (namespace == "" || m.GetNamespace() == namespace) && (name == "" || m.GetName() == name) {
			objs = append(objs, o)
		}
	}
	switch {
	case r.URL.Query().Get("watch") == "true":
		s.serveWatch(w, conv, opts, objs)
	case name != "":
		if len(objs) == 0 {
			writeJSON(w, http.StatusNotFound, apierrors.NewNotFound(gvr.GroupResource(), name).Status())
			return
		}
		table, err := conv.Convert(objs[0], opts)
		s.writeTable(w, table, err)
	default:
		b, err := conv.NewBuilder(opts)
		for _, o := range objs {
			if err == nil {
				err = b.Add(o)
			}
		}
		if err != nil {
			s.writeTable(w, nil, err)
			return
		}
		s.writeTable(w, b.Finish(metav1.ListMeta{ResourceVersion: "1000"}), nil)
	}
}

func (s *tableServer) writeTable(w http.ResponseWriter, table *metav1.Table, err error) {
	if err != nil {
		s.problem("converting: %v", err)
		writeJSON(w, http.StatusInternalServerError, apierrors.NewInternalError(err).Status())
		return
	}
	writeJSON(w, http.StatusOK, table)
}

// serveWatch sends the objects again as MODIFIED events, the last one as DELETED, each a one-row
// table, then ends the stream.
func (s *tableServer) serveWatch(w http.ResponseWriter, conv *Converter, opts Options, objs []runtime.Object) {
	watch, err := conv.Watch(opts)
	if err != nil {
		s.writeTable(w, nil, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for i, o := range objs {
		table, err := watch.Convert(o)
		if err != nil {
			s.problem("converting a watch event: %v", err)
			return
		}
		typ := "MODIFIED"
		if i == len(objs)-1 {
			typ = "DELETED"
		}
		if err := enc.Encode(map[string]any{"type": typ, "object": table}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// The server above must stay a faithful stand-in: every resource kubectl can name is served.
func TestTableServerServesEveryResource(t *testing.T) {
	srv := newTableServer(t)
	for gvr := range srv.convs {
		if len(srv.objects[gvr]) == 0 {
			t.Errorf("the kubectl test server has no objects of %s: add a list case under testdata/cases", gvr)
		}
	}
	if !slices.ContainsFunc(srv.disc.APIVersions.Versions, func(v string) bool { return v == "v1" }) {
		t.Error("discovery has no core v1")
	}
}
