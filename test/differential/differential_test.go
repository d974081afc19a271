package differential

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/apictl/apictl/internal/servertest"
)

const (
	corpusDir     = "testdata/corpus"
	goldenDir     = "testdata/golden"
	crdDir        = "testdata/crds"
	allowlistFile = "allowlist.yaml"
)

// TestDifferential replays the corpus against apictl and compares each response with the golden
// kube-apiserver answered. With DIFF_RECORD=1 and DIFF_REF_ENV=<dir>/env (written by
// start-kube-apiserver.sh) it runs the corpus against that reference server instead and rewrites
// the goldens. DIFF_REPORT=<file> writes every difference, allowlisted or not, in full.
func TestDifferential(t *testing.T) {
	files, err := loadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("DIFF_RECORD") != "" {
		record(t, files)
		return
	}
	replay(t, files)
}

// replay runs the corpus against an in-process apictl and fails on every difference the allowlist
// does not name, and on every allowlist entry that names no difference.
func replay(t *testing.T, files []corpusFile) {
	allow, err := loadAllowlist(allowlistFile)
	if err != nil {
		t.Fatal(err)
	}
	// The reference is kube-apiserver alone, with no kube-controller-manager: apictl's garbage
	// collector and namespace controller would finish the deletions the corpus leaves pending
	// (finalizers, a Terminating namespace), and whether they have by a later step would be a race;
	// its storage version migrator would write the status of the migrations the corpus creates; the
	// service-cidr-controller would add its finalizer and Ready condition to a ServiceCIDR; and the
	// controllers of Endpoints and EndpointSlices would write objects kube has no one to write.
	srv := servertest.Start(t, "--api-config", crdDir, "--controllers",
		"*,-garbage-collector-controller,-namespace-controller,-storage-version-migrator-controller,-service-cidr-controller,"+
			"-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller")
	tg, err := newTarget(srv.InsecureURL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var report strings.Builder
	var total, exact, allowed int
	steps, used := map[string]bool{}, map[string]bool{}
	vars, z := map[string]string{}, newNormalizer()
	for _, f := range files {
		golden, err := loadGolden(f.Name)
		if err != nil {
			t.Fatalf("%v (record the goldens first: see README.md)", err)
		}
		for _, s := range f.Steps {
			id := f.Name + "/" + s.ID
			steps[id] = true
			total++
			want, ok := golden[id]
			if !ok {
				t.Errorf("%s: no golden response; re-record (README.md)", id)
				continue
			}
			got, err := tg.run(ctx, f.Name, s, vars, z)
			if err != nil {
				got = &Response{Step: id, Request: want.Request, Layout: "error", Text: err.Error()}
			}
			aspects := compare(want, got)
			if len(aspects) == 0 {
				exact++
				continue
			}
			fmt.Fprintf(&report, "=== %s  %s\ndiffers: %s\n%s\n", id, got.Request, strings.Join(aspects, ", "), describe(want, got, 0))
			entry, listed := allow[id]
			used[id] = listed
			if listed && subset(aspects, entry.Differs) {
				allowed++
				if !subset(entry.Differs, aspects) {
					t.Errorf("%s: %s lists %s but only %s differ; narrow its entry", allowlistFile, id,
						strings.Join(entry.Differs, ", "), strings.Join(aspects, ", "))
				}
				continue
			}
			t.Errorf("%s (%s): %s differ from kube-apiserver%s\n%s", id, got.Request, strings.Join(aspects, ", "),
				allowHint(listed, entry), describe(want, got, 3000))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(allow)) {
		switch {
		case !steps[id]:
			t.Errorf("%s: %s names no step of the corpus; remove its entry", allowlistFile, id)
		case !used[id]:
			t.Errorf("%s: %s no longer differs from kube-apiserver; remove its entry", allowlistFile, id)
		}
	}
	if p := os.Getenv("DIFF_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("differential: %d requests, %d match kube-apiserver exactly, %d allowlisted differences, %d other differences",
		total, exact, allowed, total-exact-allowed)
}

func allowHint(listed bool, e allowEntry) string {
	if listed {
		return fmt.Sprintf(" (the allowlist entry covers only %s)", strings.Join(e.Differs, ", "))
	}
	return ""
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// compare returns the aspects in which got differs from want: status, headers, layout, body,
// events, and order (the JSON holds the same keys and values, written in another order).
func compare(want, got *Response) []string {
	var d []string
	if want.Status != got.Status {
		d = append(d, "status")
	}
	if !equalHeaders(want.Headers, got.Headers) {
		d = append(d, "headers")
	}
	if want.Layout != got.Layout {
		d = append(d, "layout")
	}
	order := false
	if want.Text != got.Text {
		d = append(d, "body")
	} else if !equalJSON(want.Body, got.Body) {
		if equalSorted(want.Body, got.Body) {
			order = true
		} else {
			d = append(d, "body")
		}
	}
	if len(want.Events) != len(got.Events) {
		d = append(d, "events")
	} else {
		for i := range want.Events {
			if equalJSON(want.Events[i], got.Events[i]) {
				continue
			}
			if !equalSorted(want.Events[i], got.Events[i]) {
				d = append(d, "events")
				break
			}
			order = true
		}
	}
	if order {
		d = append(d, "order")
	}
	return d
}

// equalSorted says whether two JSON texts hold the same values once every object's keys are
// sorted: a difference that is only key order is reported as "order", apart from "body".
func equalSorted(a, b json.RawMessage) bool {
	na, errA := parseJSON(a)
	nb, errB := parseJSON(b)
	if errA != nil || errB != nil {
		return false
	}
	na.sortKeys()
	nb.sortKeys()
	var ba, bb bytes.Buffer
	na.encode(&ba)
	nb.encode(&bb)
	return bytes.Equal(ba.Bytes(), bb.Bytes())
}

func equalHeaders(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// equalJSON compares two JSON texts byte for byte after compacting (goldens are stored indented;
// compacting keeps key order and the raw bytes of every scalar).
func equalJSON(a, b json.RawMessage) bool {
	return bytes.Equal(compactJSON(a), compactJSON(b))
}

func compactJSON(a json.RawMessage) []byte {
	if len(a) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, a) != nil {
		return a
	}
	return b.Bytes()
}

// describe shows the differing parts: status, headers and layout side by side, then for each
// JSON document the paths whose values differ and both documents, and for a text body the lines
// only one side has. Documents are clipped to limit bytes (0: whole).
func describe(want, got *Response, limit int) string {
	var b strings.Builder
	if want.Status != got.Status {
		fmt.Fprintf(&b, "  status: kube %d, apictl %d\n", want.Status, got.Status)
	}
	if !equalHeaders(want.Headers, got.Headers) {
		fmt.Fprintf(&b, "  headers: kube %v\n           apictl %v\n", want.Headers, got.Headers)
	}
	if want.Layout != got.Layout {
		fmt.Fprintf(&b, "  layout: kube %s, apictl %s\n", want.Layout, got.Layout)
	}
	show := func(name string, w, g []byte) {
		if bytes.Equal(compactJSON(w), compactJSON(g)) {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", name)
		for _, p := range pathDiff(w, g) {
			fmt.Fprintf(&b, "    %s\n", p)
		}
		fmt.Fprintf(&b, "    kube   %s\n    apictl %s\n", clip(compactJSON(w), limit), clip(compactJSON(g), limit))
	}
	show("body", want.Body, got.Body)
	if want.Text != got.Text {
		fmt.Fprintf(&b, "  text (- kube only, + apictl only):\n")
		for _, l := range lineDiff(want.Text, got.Text) {
			fmt.Fprintf(&b, "    %s\n", clip([]byte(l), limit))
		}
	}
	for i := 0; i < max(len(want.Events), len(got.Events)); i++ {
		var w, g []byte
		if i < len(want.Events) {
			w = want.Events[i]
		}
		if i < len(got.Events) {
			g = got.Events[i]
		}
		show(fmt.Sprintf("event %d", i), w, g)
	}
	return b.String()
}

func clip(b []byte, limit int) string {
	if limit > 0 && len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// lineDiff returns the lines of a missing from b ("- ") and of b missing from a ("+ "), in order,
// from a longest common subsequence (the texts are small).
func lineDiff(a, b string) []string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+y[j])
			j++
		default:
			out = append(out, "- "+x[i])
			i++
		}
	}
	return out
}

// allowEntry is one accepted difference.
type allowEntry struct {
	// Step is "<file>/<id>".
	Step string `json:"step"`
	// Differs lists the aspects that may differ: status, headers, layout, body, events, order.
	Differs []string `json:"differs"`
	// Reason says why apictl answers differently: what it does not do yet, or why it never will.
	Reason string `json:"reason"`
}

func loadAllowlist(path string) (map[string]allowEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []allowEntry
	if err := yaml.UnmarshalStrict(data, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]allowEntry{}
	for _, e := range entries {
		switch {
		case e.Step == "" || len(e.Differs) == 0 || strings.TrimSpace(e.Reason) == "":
			return nil, fmt.Errorf("%s: entry %q needs step, differs and reason", path, e.Step)
		case out[e.Step].Step != "":
			return nil, fmt.Errorf("%s: %s is listed twice", path, e.Step)
		}
		for _, a := range e.Differs {
			if !slices.Contains([]string{"status", "headers", "layout", "body", "events", "order"}, a) {
				return nil, fmt.Errorf("%s: %s: unknown aspect %q", path, e.Step, a)
			}
		}
		out[e.Step] = e
	}
	return out, nil
}

func goldenPath(file string) string { return filepath.Join(goldenDir, file+".json") }

func loadGolden(file string) (map[string]*Response, error) {
	data, err := os.ReadFile(goldenPath(file))
	if err != nil {
		return nil, err
	}
	var rs []*Response
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", goldenPath(file), err)
	}
	out := map[string]*Response{}
	for _, r := range rs {
		out[r.Step] = r
	}
	return out, nil
}

// writeGolden writes one file's responses as indented JSON without HTML escaping, so the raw
// bytes of every recorded scalar stay as kube wrote them.
func writeGolden(file string, rs []*Response) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rs); err != nil {
		return err
	}
	return os.WriteFile(goldenPath(file), b.Bytes(), 0o644)
}

// record runs the corpus against the reference kube-apiserver and rewrites the goldens.
func record(t *testing.T, files []corpusFile) {
	envFile := os.Getenv("DIFF_REF_ENV")
	if envFile == "" {
		t.Fatal("DIFF_RECORD needs DIFF_REF_ENV=<dir>/env of a fresh reference started with start-kube-apiserver.sh")
	}
	env, err := readEnv(envFile)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := newTarget(env["REF_SERVER"], env["REF_TOKEN"], env["REF_CA"])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := tg.requireFresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tg.installCRDs(ctx, crdDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	vars, z := map[string]string{}, newNormalizer()
	total := 0
	for _, f := range files {
		var rs []*Response
		for _, s := range f.Steps {
			r, err := tg.run(ctx, f.Name, s, vars, z)
			if err != nil {
				t.Fatalf("%s/%s: %v", f.Name, s.ID, err)
			}
			rs = append(rs, r)
		}
		total += len(rs)
		if err := writeGolden(f.Name, rs); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d responses from %s into %s", total, env["REF_SERVER"], goldenDir)
}

// readEnv reads the `export NAME=value` (or NAME=value) lines start-kube-apiserver.sh writes.
func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		env[k] = strings.Trim(v, `"'`)
	}
	for _, k := range []string{"REF_SERVER", "REF_TOKEN", "REF_CA"} {
		if env[k] == "" {
			return nil, fmt.Errorf("%s does not set %s", path, k)
		}
	}
	return env, sc.Err()
}

// pathDiff lists, for people, the JSON paths whose values differ (key order aside), at most 12.
func pathDiff(a, b []byte) []string {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return nil
	}
	var out []string
	var walk func(p string, x, y any)
	walk = func(p string, x, y any) {
		if len(out) >= 12 {
			return
		}
		mx, okx := x.(map[string]any)
		my, oky := y.(map[string]any)
		if okx && oky {
			keys := map[string]bool{}
			for k := range mx {
				keys[k] = true
			}
			for k := range my {
				keys[k] = true
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				walk(p+"/"+k, mx[k], my[k])
			}
			return
		}
		ax, okx := x.([]any)
		ay, oky := y.([]any)
		if okx && oky && len(ax) == len(ay) {
			for i := range ax {
				walk(fmt.Sprintf("%s/%d", p, i), ax[i], ay[i])
			}
			return
		}
		jx, jy := marshalPlain(x), marshalPlain(y)
		if !bytes.Equal(jx, jy) {
			out = append(out, fmt.Sprintf("%s: kube %s, apictl %s", p, clip(jx, 300), clip(jy, 300)))
		}
	}
	walk("", va, vb)
	return out
}

func marshalPlain(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}
