package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUpstreamArgs(t *testing.T) {
	tests := []struct {
		name    string
		urls    []string
		servers string
	}{
		{name: "one etcd", urls: []string{"http://127.0.0.1:2379"}, servers: "http://127.0.0.1:2379"},
		{name: "several etcd members", urls: []string{"http://a:1", "http://b:2"}, servers: "http://a:1,http://b:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := []string{
				"--bind-address", "127.0.0.1",
				"--etcd-servers", tt.servers,
				"--etcd-prefix", "/upstream",
				"--tls-cert-file", "/d/pki/apiserver.crt",
				"--tls-private-key-file", "/d/pki/apiserver.key",
				"--client-ca-file", "/d/pki/ca.crt",
				"--kubeconfig", "/d/stub.kubeconfig",
				"--authentication-kubeconfig", "/d/stub.kubeconfig",
				"--authorization-kubeconfig", "/d/stub.kubeconfig",
				"--authentication-skip-lookup",
				"--enable-priority-and-fairness=false",
			}
			if got := upstreamArgs(tt.urls, "/d/pki", "/d/stub.kubeconfig"); !slices.Equal(got, want) {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestPeerRatios(t *testing.T) {
	tests := []struct {
		name     string
		upstream float64
		apictl   float64
		want     float64
	}{
		{name: "apictl faster", upstream: 2000, apictl: 5000, want: 2.5},
		{name: "apictl slower", upstream: 4000, apictl: 1000, want: 0.25},
		{name: "upstream failed", upstream: 0, apictl: 1000, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := PeerResult{Upstream: PeerSide{PerSecond: tt.upstream}, Apictl: PeerSide{PerSecond: tt.apictl}}
			if got := r.Ratio(); got != tt.want {
				t.Errorf("PeerResult.Ratio() = %v, want %v", got, tt.want)
			}
			p := PeerPair{Upstream: int64(tt.upstream), Apictl: int64(tt.apictl)}
			if got := p.Ratio(); got != tt.want {
				t.Errorf("PeerPair.Ratio() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPeerOrderAlternates(t *testing.T) {
	tests := []struct {
		turn int
		want []int
	}{
		{turn: 0, want: []int{0, 1}},
		{turn: 1, want: []int{1, 0}},
		{turn: 2, want: []int{0, 1}},
		{turn: 7, want: []int{1, 0}},
	}
	for _, tt := range tests {
		if got := peerOrder(tt.turn); !slices.Equal(got, tt.want) {
			t.Errorf("peerOrder(%d) = %v, want %v", tt.turn, got, tt.want)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    time.Duration
		wantErr string
	}{
		{name: "plain", line: "1085 (apictl) S 1042 1042 28273 0 -1 4194304 127 0 0 0 250 37 0 0 20 0 12 0 2497647 3133440 413",
			want: 2870 * time.Millisecond},
		{name: "a command name with spaces and parentheses", line: "7 (a (b) c) R 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 6 7",
			want: 30 * time.Millisecond},
		{name: "no command name", line: "7 R 1", wantErr: "no ')'"},
		{name: "cut short", line: "7 (x) R 1 1 1", wantErr: "fields after the command name"},
		{name: "not a number", line: "7 (x) R 1 1 1 0 -1 0 0 0 0 0 x 2 0", wantErr: `CPU ticks "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// samplePeer is a peer comparison with a failed measurement.
func samplePeer() *Report {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	return &Report{
		Environment: Environment{
			GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", GOMAXPROCS: 2, NumCPU: 2, CPUModel: "AMD EPYC",
			Warmup: 400 * time.Millisecond, Duration: 2 * time.Second, Etcd: etcdDescription, Client: clientDescription,
		},
		Peer: &Peer{
			Upstream: "k8s.io/apiextensions-apiserver v0.37.2",
			Client:   "h2+tls, apictl's admin client certificate (O=system:masters) on both, one client per concurrency",
			Objects:  "custom objects of " + scaleCRDName, Listed: 1000,
			Results: []PeerResult{
				{Operation: OpGet, Concurrency: 8,
					Upstream: PeerSide{PerSecond: 2460, P50: ms(2.9), P99: ms(11.9), CPUPerRequest: us(367), EtcdCPUPerRequest: us(48), ClientCPUPerRequest: us(41), Busy: 0.93},
					Apictl:   PeerSide{PerSecond: 8067, P50: ms(0.9), P99: ms(3.08), CPUPerRequest: us(83), EtcdCPUPerRequest: us(47), ClientCPUPerRequest: us(39), Busy: 0.81}},
				{Operation: OpCreate, Concurrency: 32,
					Upstream: PeerSide{PerSecond: 900, P50: ms(30), P99: ms(80), CPUPerRequest: us(900), EtcdCPUPerRequest: us(185), ClientCPUPerRequest: us(72), Busy: 0.86, Failed: 2, FirstError: "POST: 500"},
					Apictl:   PeerSide{PerSecond: 1500, P50: ms(20), P99: ms(50), CPUPerRequest: us(400), EtcdCPUPerRequest: us(186), ClientCPUPerRequest: us(70), Busy: 0.78}},
			},
			Features: "an audit policy, RBAC",
			FeaturesResults: []PeerResult{
				{Operation: OpGet, Concurrency: 8,
					Upstream: PeerSide{PerSecond: 2100, P50: ms(3.4), P99: ms(12.5), CPUPerRequest: us(410), EtcdCPUPerRequest: us(50), ClientCPUPerRequest: us(42), Busy: 0.94},
					Apictl:   PeerSide{PerSecond: 6900, P50: ms(1.1), P99: ms(3.5), CPUPerRequest: us(101), EtcdCPUPerRequest: us(48), ClientCPUPerRequest: us(40), Busy: 0.83, Failed: 1, FirstError: "GET: 403"}},
			},
			ReadyEmpty:    PeerPair{Upstream: int64(ms(308)), Apictl: int64(ms(266))},
			ReadyLoaded:   PeerPair{Upstream: int64(ms(207)), Apictl: int64(ms(145))},
			MemoryObjects: PeerObjects,
			RSS:           PeerPair{Upstream: 197 << 20, Apictl: 102 << 20},
			RSSAnon:       PeerPair{Upstream: 140 << 20, Apictl: 36 << 20},
			RSSFile:       PeerPair{Upstream: 57 << 20, Apictl: 66 << 20},
			StubAsked:     []string{"GET /api/v1/namespaces (2 plain, 4 watch)", "GET /openapi/v3 (3 plain)"},
		},
	}
}

func TestWriteTextPeer(t *testing.T) {
	var b bytes.Buffer
	if err := samplePeer().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "peer.txt", b.Bytes())
}

func TestCheckPeer(t *testing.T) {
	err := samplePeer().Check(false)
	if err == nil || !strings.Contains(err.Error(), "peer comparison, CREATE at concurrency 32 on upstream: 2 requests failed, the first with: POST: 500") {
		t.Errorf("Check: %v, want the upstream's failed creates", err)
	}
}

// TestCoreStub asks the stub what the upstream server asks it, over TLS with apictl's PKI as the
// comparison runs it.
func TestCoreStub(t *testing.T) {
	dataDir := t.TempDir()
	serving, pool := testPKI(t, dataDir)
	stub, err := startCoreStub(serving, "secret", []string{"default", listNamespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stub.stop(); err != nil {
			t.Error(err)
		}
	})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	h := httpTarget{client: client, base: stub.url, protoMajor: 1}
	ctx := context.Background()
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		want   int
		check  func(t *testing.T, body []byte)
	}{
		{name: "namespaces", method: http.MethodGet, path: "/api/v1/namespaces", want: http.StatusOK, check: func(t *testing.T, body []byte) {
			if !bytes.Contains(body, []byte(`"name":"bench-list"`)) || !bytes.Contains(body, []byte(`"kind":"NamespaceList"`)) {
				t.Errorf("namespaces: %s", body)
			}
		}},
		{name: "a namespace", method: http.MethodGet, path: "/api/v1/namespaces/default", want: http.StatusOK},
		{name: "an unknown namespace", method: http.MethodGet, path: "/api/v1/namespaces/nope", want: http.StatusNotFound},
		{name: "another collection is empty", method: http.MethodGet, path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", want: http.StatusOK,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"items":[]`)) || bytes.Contains(body, []byte(`"kind"`)) {
					t.Errorf("empty list: %s", body)
				}
			}},
		{name: "a watch-list is refused", method: http.MethodGet, path: "/api/v1/namespaces?watch=true&sendInitialEvents=true", want: http.StatusBadRequest},
		{name: "the token", method: http.MethodPost, path: "/apis/authentication.k8s.io/v1/tokenreviews", want: http.StatusCreated,
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"secret"}}`,
			check: func(t *testing.T, body []byte) {
				var r struct {
					Status struct {
						Authenticated bool `json:"authenticated"`
						User          struct {
							Username string   `json:"username"`
							Groups   []string `json:"groups"`
						} `json:"user"`
					} `json:"status"`
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				if !r.Status.Authenticated || r.Status.User.Username != stubUser || !slices.Contains(r.Status.User.Groups, "system:masters") {
					t.Errorf("token review: %s", body)
				}
			}},
		{name: "another token", method: http.MethodPost, path: "/apis/authentication.k8s.io/v1/tokenreviews", want: http.StatusCreated,
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"guess"}}`,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"authenticated":false`)) {
					t.Errorf("token review: %s", body)
				}
			}},
		{name: "access", method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/subjectaccessreviews", want: http.StatusCreated,
			body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"x"}}`,
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"allowed":true`)) {
					t.Errorf("access review: %s", body)
				}
			}},
		{name: "other writes", method: http.MethodPost, path: "/api/v1/namespaces", body: `{}`, want: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			var buf bytes.Buffer
			if err := h.do(ctx, tt.method, tt.path, body, tt.want, &buf); err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, buf.Bytes())
			}
		})
	}
	// A watch stays open until the stub stops; the client gives up first here.
	const giveUp = 100 * time.Millisecond
	wctx, cancel := context.WithTimeout(ctx, giveUp)
	defer cancel()
	began := time.Now()
	_ = h.do(wctx, http.MethodGet, "/api/v1/namespaces?watch=true", nil, http.StatusOK, nil)
	if took := time.Since(began); took < giveUp {
		t.Errorf("the watch ended by itself after %s", took)
	}
	if got := stub.asked(); !slices.Contains(got, "GET /api/v1/namespaces (1 plain, 2 watch)") {
		t.Errorf("asked %q", got)
	}
}

func TestStubKubeconfig(t *testing.T) {
	got := string(stubKubeconfig("https://127.0.0.1:1234", filepath.Join("/d", "ca.crt"), "tok"))
	for _, want := range []string{`server: "https://127.0.0.1:1234"`, `certificate-authority: "/d/ca.crt"`, `token: "tok"`, "current-context: core-stub"} {
		if !strings.Contains(got, want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, got)
		}
	}
}

func TestPeerSideBest(t *testing.T) {
	slow := PeerSide{PerSecond: 100, Failed: 1, FirstError: "boom"}
	fast := PeerSide{PerSecond: 300}
	for _, tc := range []struct {
		name        string
		first, then PeerSide
	}{
		{"the faster comes second", slow, fast},
		{"the faster comes first", fast, slow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PeerSide{}.best(tc.first).best(tc.then)
			if got.PerSecond != 300 || got.Failed != 1 || got.FirstError != "boom" {
				t.Errorf("best = %+v, want the faster round with the slower one's failure", got)
			}
		})
	}
}

// TestWriteTextBefore prints a before comparison: the other side named "before", how each side
// answered a LIST asking for gzip, and no process table.
func TestWriteTextBefore(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	r := samplePeer()
	r.Peer = &Peer{
		Upstream: "apictl /tmp/apictl-cf2ae71", Other: "before",
		Client:  "http/1.1 on the insecure port, one client per concurrency",
		Objects: "ConfigMaps", Listed: 1000,
		Encodings: []string{"before: none", "apictl: gzip"},
		Results: []PeerResult{
			{Operation: OpListGzip, Concurrency: 8,
				Upstream: PeerSide{PerSecond: 1177, P50: us(6000), P99: us(15400), CPUPerRequest: us(547), EtcdCPUPerRequest: us(142), ClientCPUPerRequest: us(333), Busy: 0.59},
				Apictl:   PeerSide{PerSecond: 1150, P50: us(6100), P99: us(16000), CPUPerRequest: us(560), EtcdCPUPerRequest: us(140), ClientCPUPerRequest: us(180), Busy: 0.57, Failed: 1, FirstError: "GET: 429"}},
		},
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "before.txt", b.Bytes())
	if err := r.Check(false); err == nil || !strings.Contains(err.Error(), "LIST gzip at concurrency 8 on apictl: 1 requests failed") {
		t.Errorf("Check: %v, want apictl's failed LIST", err)
	}
}
