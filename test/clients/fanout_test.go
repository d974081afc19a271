package clients

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apictl/apictl/internal/servertest"
)

// TestThousandWatchers is the kubectl issue's fan-out must-show: 1,000 concurrent watchers of one
// resource each receive every one of 1,000 changes, in order, while the server holds a single etcd
// watch for the resource. The watches share a few TLS connections (HTTP/2), so the test needs few file
// descriptors. It reports delivery latency; it asserts correctness only, never timing.
func TestThousandWatchers(t *testing.T) {
	const watchers, changes = 1000, 1000
	srv := servertest.Start(t)
	client, err := srv.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 0 // watches stream for as long as the test needs
	base := srv.SecureURL + "/api/v1/namespaces/default/configmaps"
	// Each watch cache opens its etcd watch just after its first list, which readiness waits for; so
	// the count settles at one watch per cache shortly after start.
	waitMetric(t, client, srv.SecureURL, "apiserver_storage_etcd_watches", float64(countSamples(t, client, srv.SecureURL, "apiserver_watch_cache_objects")))
	etcdWatchesBefore := metric(t, client, srv.SecureURL, "apiserver_storage_etcd_watches")
	// The server's own root-ca-cert-publisher watches configmaps too, from a post-start hook, and so
	// does the cluster-authentication-trust controller's informer (kube-system's, for
	// extension-apiserver-authentication), and so does the garbage collector (its graph follows every
	// resource's watch cache), and so does the resourcequota-controller's monitor (it counts objects
	// of every quotable resource).
	const ownWatchers = 4
	waitMetric(t, client, srv.SecureURL, `apiserver_registered_watchers{group="",resource="configmaps"}`, ownWatchers)

	list, err := client.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(list.Body)
	list.Body.Close()
	rv := regexp.MustCompile(`"resourceVersion":"(\d+)"`).FindSubmatch(body)[1]

	sent := make([]time.Time, changes)
	var sentMu sync.RWMutex
	latencies := make([][]time.Duration, watchers)
	var failures atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"?watch=true&resourceVersion="+string(rv), nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			last, seen := int64(0), 0
			for seen < changes && sc.Scan() {
				line := sc.Bytes()
				now := time.Now()
				n, rv, ok := parseEvent(line)
				if !ok || rv <= last || n != seen {
					failures.Add(1)
					return
				}
				last, seen = rv, seen+1
				sentMu.RLock()
				latencies[i] = append(latencies[i], now.Sub(sent[n]))
				sentMu.RUnlock()
			}
			if seen != changes {
				failures.Add(1)
			}
		}()
	}
	waitMetric(t, client, srv.SecureURL, `apiserver_registered_watchers{group="",resource="configmaps"}`, watchers+ownWatchers)
	if got := metric(t, client, srv.SecureURL, "apiserver_storage_etcd_watches"); got != etcdWatchesBefore {
		t.Errorf("%d watchers opened %v etcd watches, had %v before: every watcher must share the resource's one", watchers,
			got, etcdWatchesBefore)
	}

	for n := range changes {
		sentMu.Lock()
		sent[n] = time.Now()
		sentMu.Unlock()
		obj := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d"}}`, n)
		resp, err := client.Post(base, "application/json", strings.NewReader(obj))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("create %d: %d", n, resp.StatusCode)
		}
	}
	wg.Wait()
	if f := failures.Load(); f > 0 {
		t.Fatalf("%d of %d watchers missed events or saw them out of order", f, watchers)
	}
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	t.Logf("%d watchers × %d changes: delivery latency p50 %v, p99 %v, max %v", watchers, changes,
		all[len(all)/2], all[len(all)*99/100], all[len(all)-1])
}

// parseEvent reads the configmap number and resourceVersion of an ADDED event line without decoding
// all of it: a million lines go by.
func parseEvent(line []byte) (n int, rv int64, ok bool) {
	if !bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) {
		return 0, 0, false
	}
	i := bytes.Index(line, []byte(`"resourceVersion":"`))
	j := bytes.Index(line, []byte(`"name":"cm-`))
	if i < 0 || j < 0 {
		return 0, 0, false
	}
	rest := line[i+len(`"resourceVersion":"`):]
	end := bytes.IndexByte(rest, '"')
	rv, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	n, err = strconv.Atoi(string(line[j+len(`"name":"cm-`) : j+len(`"name":"cm-`)+4]))
	return n, rv, err == nil
}

// metricLines reads the lines of /metrics.
func metricLines(t *testing.T, c *http.Client, base string) []string {
	t.Helper()
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	return lines
}

// metric reads one unlabelled (or fully labelled) sample from /metrics.
func metric(t *testing.T, c *http.Client, base, name string) float64 {
	t.Helper()
	for _, line := range metricLines(t, c, base) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return -1
}

// countSamples counts the samples of a labelled metric: one per label set.
func countSamples(t *testing.T, c *http.Client, base, name string) int {
	t.Helper()
	n := 0
	for _, line := range metricLines(t, c, base) {
		if strings.HasPrefix(line, name+"{") {
			n++
		}
	}
	return n
}

func waitMetric(t *testing.T, c *http.Client, base, name string, want float64) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s = %v", name, want), func() bool { return metric(t, c, base, name) == want })
}
