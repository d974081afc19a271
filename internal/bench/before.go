package bench

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// The before comparison: apictl against an earlier build of itself (Config.Before), side by side on
// the harness's etcd, each under a prefix of its own, serving the same ConfigMaps to the same client
// (plain HTTP/1.1 on the insecure port), measured alternately as the peer comparison measures, with
// each side's CPU per request. A change's cost is judged by it where separate runs would differ by
// more than the change: single runs of one binary differ by up to 30% on a shared machine. It also
// measures the LISTs as client-go sends them, asking for gzip (issue 38's compression).
const beforeEtcdPrefix = "/before"

// compareBefore runs the before comparison in dir.
func compareBefore(ctx context.Context, cfg Config, dir string) (_ *Peer, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("preparing the before comparison: %w", err)
	}
	p := &Peer{
		Upstream: "apictl " + cfg.Before,
		Other:    "before",
		Client:   "http/1.1 on the insecure port, one client per concurrency",
		Objects:  "ConfigMaps",
		Listed:   cfg.ListObjects,
	}
	etcd, err := startEtcd(ctx, cfg.Etcd, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, etcd.proc.stop()) }()
	sides := []*peerSide{{name: "before"}, {name: "apictl"}}
	for i, bin := range []string{cfg.Before, cfg.Apictl} {
		side := sides[i]
		var extra []string
		if side.name == "before" {
			// The flag is given twice; the last one counts.
			extra = []string{"--etcd-prefix", beforeEtcdPrefix}
		}
		s, took, err := startServer(ctx, bin, filepath.Join(dir, side.name), etcd.urls, readyPollInterval, extra...)
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", side.name, err)
		}
		cfg.Logger.Info("server ready", "server", side.name, "after", took)
		side.s = s
		defer func() { err = errors.Join(err, side.s.stop()) }()
		h, err := side.s.target(ViaHTTP1, seedConcurrency)
		if err != nil {
			return nil, err
		}
		cfg.Logger.Info("seeding", "server", side.name, "objects", cfg.ListObjects)
		err = seed(ctx, h, cfg.ListObjects, cfg.maxConcurrency())
		h.client.CloseIdleConnections()
		if err != nil {
			return nil, fmt.Errorf("seeding %s: %w", side.name, err)
		}
	}
	for _, side := range sides {
		enc, err := checkGzipList(ctx, side.s, cfg.ListObjects)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side.name, err)
		}
		// Today's server must compress a list this big, as kube does; the earlier one may not have.
		if side.name == "apictl" && enc != "gzip" {
			return nil, fmt.Errorf("a LIST of %d objects asking for gzip: answered with Content-Encoding %q, want gzip", cfg.ListObjects, enc)
		}
		p.Encodings = append(p.Encodings, side.name+": "+cmp.Or(enc, "none"))
	}
	insecure := func(s *server, c int) (httpTarget, error) { return s.target(ViaHTTP1, c) }
	if p.Results, err = measurePeerRows(ctx, cfg, sides, etcd.proc, configMapKind(), insecure, "before", BeforeOperations()); err != nil {
		return nil, err
	}
	return p, nil
}

// checkGzipList LISTs the listed objects of s asking for gzip and not, and checks that the first
// answer, decompressed when it came compressed, is the second list, the list's own
// resourceVersion aside. It returns the first answer's Content-Encoding.
func checkGzipList(ctx context.Context, s *server, listed int) (string, error) {
	h, err := s.target(ViaHTTP1, 1)
	if err != nil {
		return "", err
	}
	defer h.client.CloseIdleConnections()
	path := configMapsPath(listNamespace)
	var zipped, plain bytes.Buffer
	enc, err := h.getGzip(ctx, path, &zipped)
	if err != nil {
		return "", err
	}
	if err := h.do(ctx, http.MethodGet, path, nil, http.StatusOK, &plain); err != nil {
		return "", err
	}
	got := zipped.Bytes()
	if enc == "gzip" {
		zr, err := gzip.NewReader(&zipped)
		if err != nil {
			return enc, fmt.Errorf("a LIST asking for gzip: %w", err)
		}
		if got, err = io.ReadAll(zr); err != nil {
			return enc, fmt.Errorf("a LIST asking for gzip: decompressing it: %w", err)
		}
	}
	_, items, ok := bytes.Cut(got, []byte(`"items":`))
	_, want, _ := bytes.Cut(plain.Bytes(), []byte(`"items":`))
	if !ok || !bytes.Equal(items, want) {
		return enc, fmt.Errorf("a LIST asking for gzip (Content-Encoding %q) decompressed to %d bytes other than the %d of the same LIST uncompressed", enc, len(got), plain.Len())
	}
	if n := bytes.Count(items, []byte(`"name":"`+listNamePrefix)); n != listed {
		return enc, fmt.Errorf("a LIST asking for gzip has %d items, want %d", n, listed)
	}
	return enc, nil
}
