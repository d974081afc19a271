package apiserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestEtcdMonitorLogsEachTransitionOnce(t *testing.T) {
	// The probe answers per this script, then keeps its last answer.
	script := []error{nil, errors.New("connection refused"), errors.New("connection refused"), errors.New("timeout"), nil, nil}
	var (
		mu    sync.Mutex
		calls int
		done  = make(chan struct{})
	)
	check := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		i := min(calls, len(script)-1)
		calls++
		if calls == len(script)+2 {
			close(done)
		}
		return script[i]
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	m := newEtcdMonitor(check, slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil)))
	m.interval = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); m.run(ctx) }()
	<-done
	cancel()
	<-stopped

	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if n := strings.Count(out, "etcd does not answer"); n != 1 {
		t.Errorf("%d outage lines, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "etcd answers again"); n != 1 || !strings.Contains(out, "downFor=") {
		t.Errorf("%d recovery lines (with downFor), want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "connection refused") {
		t.Errorf("the outage line does not say why:\n%s", out)
	}
	if got := value(t, m.up); got != 1 {
		t.Errorf("apictl_etcd_up = %v after recovery, want 1", got)
	}
	if got := value(t, m.outages); got != 1 {
		t.Errorf("apictl_etcd_outages_total = %v, want 1", got)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// value reads a gauge's or a counter's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}
