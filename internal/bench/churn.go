package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// Churn is the namespace churn measurement (issue 20): namespaces created and deleted over and over
// on one server, its resident memory read after every tenth of the cycles once the deleted
// namespaces are gone. Memory the server keeps per namespace ever deleted (the bookkeeping of
// recently deleted namespaces, a controller's queue, an index) shows as growth from sample to
// sample; bounded bookkeeping levels off after the first tenth.
type Churn struct {
	Cycles      int           `json:"cycles"`
	Concurrency int           `json:"concurrency"`
	Took        time.Duration `json:"tookNanoseconds"`
	// IdleRSS is the server's memory before the first cycle.
	IdleRSS int64         `json:"idleRSSBytes"`
	Samples []ChurnSample `json:"samples"`
	// Baseline is the index of the sample growth is judged from: the first one taken after the
	// first tenth of the cycles and once etcd's history window is full (ChurnCompactionInterval).
	Baseline int `json:"baseline"`
	// Growth is the last sample's anonymous RSS over the baseline's, less one: the measure judged
	// against ChurnGrowthTarget.
	Growth float64 `json:"growth"`
}

// ChurnSample is the server's memory after Cycles cycles, every namespace deleted so far gone: its
// RSS and how it divides into anonymous memory (RssAnon: the Go heap and runtime, the embedded etcd's
// index) and file pages (RssFile: the binary, and the embedded etcd's database, which etcd maps
// read-only: clean page cache the kernel takes back under pressure, and which grows in steps to
// bbolt's high-water mark and never shrinks), the Go heap in use (go_memstats_heap_inuse_bytes), and
// the size of the embedded etcd's database file. Growth is judged on Anon: what the process holds.
type ChurnSample struct {
	Cycles    int           `json:"cycles"`
	Elapsed   time.Duration `json:"elapsedNanoseconds"`
	RSS       int64         `json:"rssBytes"`
	Anon      int64         `json:"rssAnonBytes"`
	File      int64         `json:"rssFileBytes"`
	HeapInuse int64         `json:"heapInuseBytes"`
	EtcdDB    int64         `json:"etcdDatabaseBytes"`
}

// ChurnGrowthTarget is issue 20's bound: RSS flat within 10% after the first tenth of the cycles.
const ChurnGrowthTarget = 0.10

// churnSamples is how many times memory is read during the churn.
const churnSamples = 10

// namespaceChurn starts `apictl serve` on its embedded etcd, as users run it, and runs cfg.NamespaceCycles
// create/delete cycles of uniquely named namespaces on ChurnConcurrency clients.
func namespaceChurn(ctx context.Context, cfg Config, dir string) (_ *Churn, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("measuring namespace churn: %w", err)
	}
	s, _, err := startServer(ctx, cfg.Apictl, filepath.Join(dir, "data"), nil, readyPollInterval,
		"--etcd-compaction-interval", ChurnCompactionInterval.String())
	if err != nil {
		return nil, fmt.Errorf("measuring namespace churn: %w", err)
	}
	defer func() { err = errors.Join(err, s.stop()) }()
	h, err := s.target(ViaHTTP1, ChurnConcurrency)
	if err != nil {
		return nil, err
	}
	defer h.client.CloseIdleConnections()
	if err := sleep(ctx, cfg.Settle); err != nil {
		return nil, err
	}
	c := &Churn{Cycles: cfg.NamespaceCycles, Concurrency: ChurnConcurrency}
	if c.IdleRSS, _, err = s.proc.memory(); err != nil {
		return nil, err
	}
	began := time.Now()
	done := 0
	for i := 1; i <= churnSamples; i++ {
		upTo := cfg.NamespaceCycles * i / churnSamples
		err := parallel(ctx, upTo-done, ChurnConcurrency, func(ctx context.Context, j int) error {
			return churnCycle(ctx, h, "churn-"+strconv.Itoa(done+j))
		})
		if err != nil {
			return nil, fmt.Errorf("namespace churn after %d cycles: %w", done, err)
		}
		done = upTo
		if err := waitNamespacesGone(ctx, h); err != nil {
			return nil, fmt.Errorf("namespace churn after %d cycles: %w", done, err)
		}
		if err := sleep(ctx, cfg.Settle); err != nil {
			return nil, err
		}
		sample := ChurnSample{Cycles: done, Elapsed: time.Since(began)}
		m, err := s.proc.memoryDetail()
		if err != nil {
			return nil, err
		}
		sample.RSS, sample.Anon, sample.File = m.RSS, m.Anon, m.File
		if sample.HeapInuse, err = s.heapInuse(ctx); err != nil {
			return nil, err
		}
		if st, err := os.Stat(filepath.Join(dir, "data", "etcd", "member", "snap", "db")); err == nil {
			sample.EtcdDB = st.Size()
		}
		c.Samples = append(c.Samples, sample)
		cfg.Logger.Info("namespace churn", "cycles", done, "rss", formatBytes(sample.RSS), "anon", formatBytes(sample.Anon),
			"file", formatBytes(sample.File), "heap", formatBytes(sample.HeapInuse),
			"etcdDB", formatBytes(sample.EtcdDB), "took", sample.Elapsed.Round(time.Millisecond))
	}
	c.Took = time.Since(began)
	c.judge()
	return c, nil
}

// churnHistory is how long after the start the embedded etcd's history window is full: apictl
// compacts to the revision of the interval before, so up to two intervals of revisions are kept.
const churnHistory = 2 * ChurnCompactionInterval

// judge picks the baseline sample and computes the growth from it to the last.
func (c *Churn) judge() {
	c.Baseline = len(c.Samples) - 1
	for i, s := range c.Samples {
		if s.Elapsed >= churnHistory {
			c.Baseline = i
			break
		}
	}
	if base := c.Samples[c.Baseline].Anon; base > 0 {
		c.Growth = float64(c.Samples[len(c.Samples)-1].Anon)/float64(base) - 1
	}
}

// ChurnCompactionInterval is the churned server's --etcd-compaction-interval. Its embedded etcd keeps
// every revision of the last one or two intervals (apictl compacts as kube-apiserver does, to the
// revision of the interval before), in its index and its database, and the database's pages count in
// the process's RSS: at hundreds of writes a second, kube's 5 minutes make that history grow for the
// first ten minutes of the run, whatever the server keeps. A minute brings that window to its steady
// size within the first tenth of the cycles, so that the readings show what grows with the namespaces.
const ChurnCompactionInterval = time.Minute

// ChurnConcurrency is how many clients create and delete namespaces at once.
const ChurnConcurrency = 8

// churnCycle creates namespace name and deletes it at once, as a test suite does with its
// namespaces; the namespace controller empties and removes it afterwards.
func churnCycle(ctx context.Context, h httpTarget, name string) error {
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `","labels":{"bench":"churn"}}}`)
	if err := h.do(ctx, http.MethodPost, "/api/v1/namespaces", body, http.StatusCreated, nil); err != nil {
		return err
	}
	return h.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+name, nil, http.StatusOK, nil)
}

// churnGoneTimeout bounds the wait for the namespace controller to remove the deleted namespaces.
const churnGoneTimeout = 5 * time.Minute

// waitNamespacesGone waits until no namespace of the churn is left.
func waitNamespacesGone(ctx context.Context, h httpTarget) error {
	ctx, cancel := context.WithTimeout(ctx, churnGoneTimeout)
	defer cancel()
	var buf bytes.Buffer
	for {
		if err := h.do(ctx, http.MethodGet, "/api/v1/namespaces?labelSelector=bench%3Dchurn&limit=1", nil, http.StatusOK, &buf); err != nil {
			return fmt.Errorf("waiting for the deleted namespaces to go: %w", err)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(buf.Bytes(), &list); err != nil {
			return fmt.Errorf("waiting for the deleted namespaces to go: decoding the list: %w", err)
		}
		if len(list.Items) == 0 {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for the deleted namespaces to go: %w", err)
		}
	}
}

// table shows the server's memory along the churn.
func (c *Churn) table() output.Table {
	t := output.Table{
		Title: fmt.Sprintf("namespace churn: %d namespaces created and deleted by %d clients in %s, apictl serve on its embedded etcd, --etcd-compaction-interval %s (idle RSS %s)",
			c.Cycles, c.Concurrency, c.Took.Round(time.Second), ChurnCompactionInterval, formatBytes(c.IdleRSS)),
		Header: []string{"CYCLES", "AFTER", "RSS", "ANON", "VS BASELINE", "FILE", "GO HEAP IN USE", "ETCD DATABASE"},
	}
	base := float64(c.Samples[c.Baseline].Anon)
	for i, s := range c.Samples {
		vs := fmt.Sprintf("%+.1f%%", 100*(float64(s.Anon)/base-1))
		if i == c.Baseline {
			vs = "baseline"
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(s.Cycles), s.Elapsed.Round(time.Second).String(), formatBytes(s.RSS), formatBytes(s.Anon), vs,
			formatBytes(s.File), formatBytes(s.HeapInuse), formatBytes(s.EtcdDB)})
	}
	verdict := "ok"
	if c.Growth > ChurnGrowthTarget {
		verdict = "GREW"
	}
	t.Rows = append(t.Rows, []string{"growth", "", "", fmt.Sprintf("%+.1f%%", 100*c.Growth),
		fmt.Sprintf("≤ %.0f%% (anonymous RSS) from the first reading after %s, etcd's history window full: %s", 100*ChurnGrowthTarget, churnHistory, verdict), "", "", ""})
	return t
}
