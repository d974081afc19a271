package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/status"
)

// BenchmarkStatusAtScale times /apictl/v1/status on a server holding APICTL_STATUS_OBJECTS
// ConfigMaps (10,000 unless set; issue 37 asks for 1 s at 1,000,000), and fails if answering made
// the server LIST anything: its own apiserver_request_total{verb="LIST"} must not move. etcd's
// range count (etcd_mvcc_range_total, every read of the process's members) is reported per status.
func BenchmarkStatusAtScale(b *testing.B) {
	n := 10_000
	if v := os.Getenv("APICTL_STATUS_OBJECTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("APICTL_STATUS_OBJECTS=%q: %v", v, err)
		}
	}
	s := servertest.Start(b)
	ctx := context.Background()
	cfg := rest.CopyConfig(s.AdminConfig)
	cfg.QPS, cfg.Burst = -1, 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	began := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%07d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("seeding: %v", err)
	}
	b.Logf("seeded %d ConfigMaps in %s", n, time.Since(began).Round(time.Millisecond))

	lists := func() float64 { return counter(b, s, "apiserver_request_total", "verb", "LIST") }
	ranges := func() float64 { return defaultCounter(b, "etcd_mvcc_range_total") }
	listsBefore, rangesBefore := lists(), ranges()
	var slowest time.Duration
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		r, err := status.Fetch(ctx, s.AdminConfig)
		if err != nil {
			b.Fatal(err)
		}
		slowest = max(slowest, time.Since(t))
		if r.API == nil || r.API.Objects < int64(n) {
			b.Fatalf("the report counts %+v objects, want at least %d", r.API, n)
		}
	}
	b.StopTimer()
	if d := lists() - listsBefore; d != 0 {
		b.Errorf("answering the status made %v LIST requests", d)
	}
	b.ReportMetric(float64(slowest.Milliseconds()), "slowest-ms")
	b.ReportMetric((ranges()-rangesBefore)/float64(b.N), "etcd-ranges/op")
	if slowest > time.Second {
		b.Errorf("the slowest status took %s, over issue 37's 1 s", slowest)
	}
}

// counter sums the server's counter name over the series whose label is value, from /metrics.
func counter(b *testing.B, s *servertest.Server, name, label, value string) float64 {
	b.Helper()
	c, err := s.HTTPClient()
	if err != nil {
		b.Fatal(err)
	}
	resp, err := c.Get(s.InsecureURL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, label+`="`+value+`"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			b.Fatalf("%s: %v", line, err)
		}
		total += v
	}
	return total
}

func defaultCounter(b *testing.B, name string) float64 {
	b.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return sum(f, "", "")
		}
	}
	return 0
}

func sum(f *dto.MetricFamily, label, value string) float64 {
	var total float64
	for _, m := range f.GetMetric() {
		match := label == ""
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				match = true
			}
		}
		if match {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
