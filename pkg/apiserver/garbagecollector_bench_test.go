package apiserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkGarbageCollector is issue 16's measurement: the server's CPU while idle with no objects
// and with N dependents (APICTL_BENCH_GC, default 10,000) in the collector's graph (the collector
// watches, it never polls), then the time from the background delete of their owner until the last
// of them is gone. Run it alone:
//
//	go test ./pkg/apiserver -run '^$' -bench BenchmarkGarbageCollector -benchtime 1x
func BenchmarkGarbageCollector(b *testing.B) {
	n := 10_000
	if v := os.Getenv("APICTL_BENCH_GC"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("APICTL_BENCH_GC=%q: want a positive number", v)
		}
	}
	s := servertest.Start(b)
	cfg := *s.AdminConfig
	cfg.QPS = -1
	cs := kubernetes.NewForConfigOrDie(&cfg)
	ctx := context.Background()
	waitGraph(b, s, 1)
	idle := func(name string) {
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(idleCPU(b, 10*time.Second), "cpu-ms/s")
		})
	}
	idle("idle-cpu-empty")

	for i := range b.N {
		ns := fmt.Sprintf("gc-bench-%d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		before := graphNodes(b, s)
		createDependents(b, cs, ns, n, ownedBy("ConfigMap", "v1", owner, false))
		waitGraph(b, s, before+n)
		idle(fmt.Sprintf("idle-cpu-%d-objects", n))

		b.Run(fmt.Sprintf("collect-%d", n), func(b *testing.B) {
			// A watch counts the deletes, so that measuring costs the server next to nothing.
			list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "gc-bench=dependent"})
			if err != nil {
				b.Fatal(err)
			}
			w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "gc-bench=dependent", ResourceVersion: list.ResourceVersion})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			// APICTL_BENCH_COLLECT_PROFILE=<file> writes a CPU profile of the collection alone.
			stop := profile(b, "APICTL_BENCH_COLLECT_PROFILE")
			start, cpuStart := time.Now(), processCPU(b)
			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
			timeout := time.After(5 * time.Minute)
			for deleted := 0; deleted < n; {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						b.Fatalf("the watch ended after %d deletes", deleted)
					}
					if ev.Type == watch.Deleted {
						deleted++
					}
				case <-timeout:
					b.Fatalf("%d of %d dependents deleted after 5 minutes", deleted, n)
				}
			}
			took := time.Since(start)
			stop()
			b.ReportMetric(took.Seconds(), "s")
			// Wall time depends on what else the machine runs; CPU per delete much less.
			b.ReportMetric(float64((processCPU(b)-cpuStart).Microseconds())/float64(n), "cpu-µs/delete")
			b.ReportMetric(float64(n)/took.Seconds(), "deletes/s")
		})
	}
}

// createDependents creates n ConfigMaps owned by owner, 16 at a time.
func createDependents(b *testing.B, cs kubernetes.Interface, ns string, n int, owner metav1.OwnerReference) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("dep-%06d", i), Labels: map[string]string{"gc-bench": "dependent"},
				OwnerReferences: []metav1.OwnerReference{owner}}, Data: map[string]string{"key": "value"}}, metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

// graphNodes reads apictl_garbage_collector_graph_nodes from /metrics.
func graphNodes(b *testing.B, s *servertest.Server) int {
	b.Helper()
	resp, err := http.Get(s.InsecureURL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "apictl_garbage_collector_graph_nodes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return int(f)
		}
	}
	return 0
}

// waitGraph waits until the collector's graph holds at least want nodes.
func waitGraph(b *testing.B, s *servertest.Server, want int) {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for graphNodes(b, s) < want {
		if time.Now().After(deadline) {
			b.Fatalf("the garbage collector's graph has %d nodes after 60s, want %d", graphNodes(b, s), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// idleCPU returns the process's CPU time per second of wall time over d, in milliseconds: the
// server (and this benchmark, asleep) doing nothing but what runs on its own.
func idleCPU(b *testing.B, d time.Duration) float64 {
	b.Helper()
	time.Sleep(time.Second) // let the last writes settle
	// APICTL_BENCH_IDLE_PROFILE=<file> writes a CPU profile of the idle time alone, to see who wakes.
	defer profile(b, "APICTL_BENCH_IDLE_PROFILE")()
	start, wall := processCPU(b), time.Now()
	time.Sleep(d)
	return float64((processCPU(b) - start).Milliseconds()) / time.Since(wall).Seconds()
}

// profile writes a CPU profile to the file the environment variable env names, if set, until the
// returned function is called.
func profile(b *testing.B, env string) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
