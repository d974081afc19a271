package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestConfigMapIsAValidConfigMap(t *testing.T) {
	tests := []struct {
		name, rv string
	}{
		{name: "create", rv: ""},
		{name: "update", rv: "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := configMap("bench-write", "update-3", tt.rv, 7)
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			var cm corev1.ConfigMap
			if err := dec.Decode(&cm); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Name != "update-3" || cm.Namespace != "bench-write" ||
				cm.ResourceVersion != tt.rv || cm.Data["revision"] != "7" || len(cm.Data) != 3 {
				t.Errorf("decoded %+v", cm)
			}
		})
	}
}

func TestHTTPTargetDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/created":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"metadata":{"resourceVersion":"9"}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","reason":"NotFound"}`+"\n")
		}
	}))
	defer srv.Close()
	h := httpTarget{client: srv.Client(), base: srv.URL, protoMajor: 1}
	ctx := context.Background()

	var buf bytes.Buffer
	if err := h.do(ctx, http.MethodPost, "/created", []byte(`{}`), http.StatusCreated, &buf); err != nil {
		t.Fatal(err)
	}
	if rv, err := resourceVersionOf(buf.Bytes()); rv != "9" || err != nil {
		t.Errorf("resourceVersion %q, %v; want 9", rv, err)
	}

	err := h.do(ctx, http.MethodGet, "/missing", nil, http.StatusOK, nil)
	var se *statusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Fatalf("error %v, want a 404 statusError", err)
	}
	if want := `GET /missing: 404 Not Found, want 200: {"kind":"Status","reason":"NotFound"}`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	h.protoMajor = 2
	if err := h.do(ctx, http.MethodPost, "/created", nil, http.StatusCreated, nil); err == nil ||
		!strings.Contains(err.Error(), "answered over HTTP/1.1, want HTTP/2") {
		t.Errorf("error %v, want a protocol mismatch", err)
	}
}

func TestResourceVersionOf(t *testing.T) {
	for _, body := range []string{`{"metadata":{}}`, `not json`} {
		if _, err := resourceVersionOf([]byte(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}

// fakeConfigMaps is an API server for the write namespace's ConfigMaps: creates must be new, and
// updates must carry the current resourceVersion.
type fakeConfigMaps struct {
	mu      sync.Mutex
	rev     int
	objects map[string]int // name -> resourceVersion
}

func (f *fakeConfigMaps) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name, _ := strings.CutPrefix(r.URL.Path, configMapsPath(writeNamespace))
	name = strings.TrimPrefix(name, "/")
	reply := func(code int, name string) {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"metadata":{"name":%q,"resourceVersion":"%d"}}`, name, f.objects[name])
	}
	var cm corev1.ConfigMap
	if r.Method != http.MethodGet {
		if err := json.NewDecoder(r.Body).Decode(&cm); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	switch r.Method {
	case http.MethodGet:
		if _, ok := f.objects[name]; !ok {
			http.NotFound(w, r)
			return
		}
		reply(http.StatusOK, name)
	case http.MethodPost:
		if _, ok := f.objects[cm.Name]; ok {
			http.Error(w, "exists", http.StatusConflict)
			return
		}
		f.rev++
		f.objects[cm.Name] = f.rev
		reply(http.StatusCreated, cm.Name)
	case http.MethodPut:
		if cm.ResourceVersion != strconv.Itoa(f.objects[name]) {
			http.Error(w, "conflict", http.StatusConflict)
			return
		}
		f.rev++
		f.objects[name] = f.rev
		reply(http.StatusOK, name)
	}
}

func TestServerWorkersWrite(t *testing.T) {
	fake := &fakeConfigMaps{objects: map[string]int{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	h := httpTarget{client: srv.Client(), base: srv.URL, protoMajor: 1}
	ctx := context.Background()
	for w := range 2 {
		fake.objects[updateName(w)] = 1
	}
	for _, label := range []string{"h1-c8", "h2-c8"} {
		ops := serverWorkers(h, configMapKind(), label)
		for w := range 2 {
			create, err := ops[OpCreate](ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			update, err := ops[OpUpdate](ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := create(ctx); err != nil {
					t.Fatalf("%s worker %d create %d: %v", label, w, i, err)
				}
				// The fake refuses a stale resourceVersion: every update must carry the last one.
				if err := update(ctx); err != nil {
					t.Fatalf("%s worker %d update %d: %v", label, w, i, err)
				}
			}
		}
	}
	if created := len(fake.objects) - 2; created != 2*2*3 {
		t.Errorf("%d objects created, want 12 distinct ones", created)
	}
	if _, err := serverWorkers(h, configMapKind(), "x")[OpUpdate](ctx, 7); err == nil {
		t.Error("an update worker prepared without its object")
	}
}
