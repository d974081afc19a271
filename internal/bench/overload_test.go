package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// tooManyRequestsBody is what kube (and apictl's in-flight filter) answers a request over the limit.
func tooManyRequestsBody(t testing.TB) string {
	t.Helper()
	s := apierrors.NewTooManyRequests("Too many requests, please try again later.", 1).Status()
	s.Kind, s.APIVersion = "Status", "v1"
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJudgeOverloadAnswer(t *testing.T) {
	status := tooManyRequestsBody(t)
	tests := []struct {
		name       string
		code       int
		retryAfter string
		body       string
		want       error  // errShed or nil
		wantErr    string // otherwise
	}{
		{name: "200 succeeds", code: 200, body: `{"kind":"ConfigMapList","items":[]}`},
		{name: "429 as kube sends it is shed", code: 429, retryAfter: "1", body: status, want: errShed},
		{name: "429 without Retry-After", code: 429, body: status, wantErr: "429 Too Many Requests, but no Retry-After header"},
		{name: "429 with a date for Retry-After", code: 429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", body: status,
			wantErr: `the Retry-After header "Wed, 21 Oct 2015 07:28:00 GMT" is not a number of seconds`},
		{name: "429 with another reason", code: 429, retryAfter: "1", body: `{"kind":"Status","reason":"Timeout","code":429}`,
			wantErr: `the body is no TooManyRequests Status (kind "Status", reason "Timeout", code 429)`},
		{name: "429 with a plain body and no header", code: 429, body: "slow down\n",
			wantErr: "no Retry-After header; the body is no Status"},
		{name: "500 fails", code: 500, body: `{"kind":"Status","reason":"InternalError"}`,
			wantErr: `500 Internal Server Error, want 200 or 429: {"kind":"Status","reason":"InternalError"}`},
		{name: "503 fails even with Retry-After", code: 503, retryAfter: "1", body: status, wantErr: "503 Service Unavailable, want 200 or 429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingReader{r: strings.NewReader(tt.body)}
			resp := &http.Response{StatusCode: tt.code, Header: http.Header{}, Body: io.NopCloser(body)}
			if tt.retryAfter != "" {
				resp.Header.Set("Retry-After", tt.retryAfter)
			}
			err := judgeOverloadAnswer(resp)
			if tt.wantErr == "" {
				if err != tt.want {
					t.Fatalf("got %v, want %v", err, tt.want)
				}
			} else if err == nil || errors.Is(err, errShed) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
			}
			// The body is read to its end, so that the connection can carry the next request.
			if body.n != len(tt.body) {
				t.Errorf("read %d of %d body bytes", body.n, len(tt.body))
			}
		})
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestOverloadOp(t *testing.T) {
	status := tooManyRequestsBody(t)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/list" || r.Header.Get("Accept") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch calls.Add(1) {
		case 1:
			io.WriteString(w, `{"items":[]}`)
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, status)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	o := overloadOp(httpTarget{client: srv.Client(), base: srv.URL, protoMajor: 1}, "/list")
	ctx := context.Background()
	if err := o(ctx); err != nil {
		t.Errorf("200: %v", err)
	}
	if err := o(ctx); err != errShed {
		t.Errorf("429: %v, want errShed", err)
	}
	if err := o(ctx); err == nil || !strings.Contains(err.Error(), "GET /list: 502 Bad Gateway") {
		t.Errorf("502: %v, want an error naming the request", err)
	}
}

func TestMeasureCountsShedApart(t *testing.T) {
	var calls atomic.Int64
	tl, err := measure(context.Background(), 2, window{Duration: 50 * time.Millisecond}, func(context.Context, int) (op, error) {
		return func(context.Context) error {
			if calls.Add(1)%2 == 0 {
				return errShed
			}
			return nil
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Shed == 0 || tl.Completed == 0 || tl.Failed != 0 || tl.FirstError != nil {
		t.Errorf("shed %d, completed %d, failed %d (%v): want shed and completed, no failure", tl.Shed, tl.Completed, tl.Failed, tl.FirstError)
	}
	if len(tl.Latencies) != tl.Completed {
		t.Errorf("%d latencies for %d completed requests: shed requests must not be timed", len(tl.Latencies), tl.Completed)
	}
}

func TestSampleMax(t *testing.T) {
	t.Run("largest reading until the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		readings := []int64{5, 9, 7}
		n := 0
		peak, got, err := sampleMax(ctx, time.Millisecond, func() (int64, error) {
			v := readings[n]
			if n++; n == len(readings) {
				cancel()
			}
			return v, nil
		})
		if err != nil || peak != 9 || got != 3 {
			t.Errorf("got %d from %d readings, %v; want 9 from 3", peak, got, err)
		}
	})
	t.Run("a failed reading ends it", func(t *testing.T) {
		gone := errors.New("no such process")
		n := 0
		peak, got, err := sampleMax(context.Background(), time.Millisecond, func() (int64, error) {
			if n++; n == 3 {
				return 0, gone
			}
			return int64(n), nil
		})
		if !errors.Is(err, gone) || peak != 2 || got != 2 {
			t.Errorf("got %d from %d readings, %v; want 2 from 2 and the error", peak, got, err)
		}
	})
	t.Run("one reading even when the context has ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		peak, got, err := sampleMax(ctx, time.Millisecond, func() (int64, error) { return 4, nil })
		if err != nil || peak != 4 || got != 1 {
			t.Errorf("got %d from %d readings, %v; want 4 from 1", peak, got, err)
		}
	})
}

func TestOverloadClient(t *testing.T) {
	dataDir := t.TempDir()
	serving, pool := testPKI(t, dataDir)
	type seen struct {
		cn     string
		groups []string
		proto  string
	}
	seenCh := make(chan seen, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.TLS.PeerCertificates[0]
		seenCh <- seen{c.Subject.CommonName, c.Subject.Organization, r.Proto}
		io.WriteString(w, `{"items":[{"metadata":{"name":"list-00000"}},{"metadata":{"name":"list-00001"}},{"metadata":{"name":"kube-root-ca.crt"}}]}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, NextProtos: []string{"h2", "http/1.1"}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	s := &server{dataDir: dataDir, secureURL: srv.URL}
	client, err := s.overloadClient(context.Background(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	h := httpTarget{client: client, base: srv.URL, protoMajor: 1}
	if others, err := checkListed(context.Background(), h, "/list", 2); err != nil || !slices.Equal(others, []string{"kube-root-ca.crt"}) {
		t.Fatalf("checkListed: others %q, %v; want 2 seeded and kube-root-ca.crt", others, err)
	}
	got := <-seenCh
	// Not system:masters: the in-flight limit applies to this user.
	if got.cn != overloadUser || !slices.Equal(got.groups, []string{overloadGroup}) {
		t.Errorf("client certificate CN=%s O=%v, want CN=%s O=[%s]", got.cn, got.groups, overloadUser, overloadGroup)
	}
	// Each client on a connection of its own: HTTP/1.1, not one multiplexed HTTP/2 connection.
	if got.proto != "HTTP/1.1" {
		t.Errorf("spoke %s, want HTTP/1.1", got.proto)
	}
	if _, err := checkListed(context.Background(), h, "/list", 3); err == nil || !strings.Contains(err.Error(), "2 items, want the 3 seeded ones") {
		t.Errorf("error %v, want one about the item count", err)
	}
	// A second issue keeps the certificate that fits.
	if _, err := s.overloadClient(context.Background(), 4); err != nil {
		t.Errorf("second issue: %v", err)
	}
}

func TestPeakLimit(t *testing.T) {
	o := Overload{IdleRSS: 50 << 20, Allowance: OverloadAllowance}
	if got := o.PeakLimit(); got != 150<<20 {
		t.Errorf("limit %d, want idle + 100 MiB", got)
	}
}

func TestSampleRSSWhile(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	p, err := startProcess("sleeper", shell(t), []string{"-c", "exec sleep 30"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	s := &server{proc: p}
	ran := false
	peak, n, err := s.sampleRSSWhile(context.Background(), func() error { ran = true; return nil })
	if err != nil || !ran || n < 1 || peak <= 0 {
		t.Errorf("ran %v, peak %d from %d readings, %v; want a reading of a running process", ran, peak, n, err)
	}
	failed := errors.New("measurement failed")
	if _, _, err := s.sampleRSSWhile(context.Background(), func() error { return failed }); !errors.Is(err, failed) {
		t.Errorf("error %v, want the measurement's", err)
	}
	// A server that is gone fails the sampling.
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.sampleRSSWhile(context.Background(), func() error { return nil }); err == nil || !strings.Contains(err.Error(), "reading the memory of sleeper") {
		t.Errorf("error %v, want one about reading the memory", err)
	}
}

// BenchmarkJudgeTooManyRequests is the load generator's own cost of judging one 429: it shares the
// machine with the overloaded server, thousands of times a second.
func BenchmarkJudgeTooManyRequests(b *testing.B) {
	body := tooManyRequestsBody(b)
	header := http.Header{"Retry-After": []string{"1"}}
	b.ReportAllocs()
	for b.Loop() {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: header, Body: io.NopCloser(strings.NewReader(body))}
		if err := judgeOverloadAnswer(resp); err != errShed {
			b.Fatal(err)
		}
	}
}
