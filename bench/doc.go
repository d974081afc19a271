// Package bench holds the entry point of the benchmark harness (internal/bench). TestHarness builds apictl,
// the etcd helper (bench/internal/benchetcd) and the runner (bench/internal/benchrun) without -race,
// lets the runner measure `apictl serve` against etcd, and prints the report.
//
//	go test ./bench -run TestHarness -v                       # short run: 0.3s per measurement
//	BENCH_FULL=1 go test ./bench -run TestHarness -v -count=1 # full run: 5s per measurement
//	BENCH_DURATION=10s go test ./bench -run TestHarness -v    # any length
//	BENCH_JSON=/tmp/report.json go test ./bench -run TestHarness -v   # also write the report as JSON
//	BENCH_GUARD=1 go test ./bench -run TestHarness -v         # fail below half of issue 8's ratios
//	BENCH_ONLY=GET,CREATE go test ./bench -run TestHarness -v # only these operations (see below)
//	BENCH_AUTHZ=1 go test ./bench -run TestHarness -v         # also RBAC vs AlwaysAllow (issue 13)
//	BENCH_CRDS=1000 go test ./bench -run TestHarness -v       # measure with 1,000 CRDs installed (issue 12)
//	BENCH_SCALE_OBJECTS=1m go test ./bench -run TestHarness -v -count=1 -timeout 2h  # a million objects (issue 22)
//	BENCH_SCALE_DATA=/tmp/scale ...                           # keep the seeded objects for the next run
//	BENCH_APICTL=/tmp/apictl-old go test ./bench -run TestHarness -v  # measure a prebuilt apictl
//	BENCH_PEER=1 BENCH_DURATION=2s go test ./bench -run TestHarness -v -count=1  # vs upstream (issue 17)
//	BENCH_BEFORE=/tmp/apictl-old BENCH_FULL=1 go test ./bench -run TestHarness -v -count=1  # vs an earlier apictl
//	bench/listbytes.sh /tmp/apictl-old /tmp/apictl-new /tmp/scale  # the same list bytes from both (issue 38)
//
// BENCH_PEER=1 runs only the peer comparison: it builds k8s.io/apiextensions-apiserver at go.mod's
// version (minutes on a cold cache) and measures it and apictl alternately on one etcd, with one CRD,
// the same objects and client, printing apictl ÷ upstream with each server's CPU per request.
//
// BENCH_BEFORE=BINARY runs only the before comparison: the same, with another apictl binary (an
// earlier commit's) in the upstream server's place, on ConfigMaps over plain HTTP/1.1, and the LISTs
// measured again asking for gzip ("LIST gzip", "LIST rv=0 gzip"; the client reads the compressed
// bytes), after a check that apictl's compressed LIST decompresses to its uncompressed one. A change
// is judged by it where two separate runs of one binary differ by more than the change.
//
// bench/listbytes.sh OLD NEW DIR starts both binaries in turn on copies of a scale run's kept data
// (BENCH_SCALE_DATA=DIR) and fails unless kubectl get -o yaml --chunk-size=0 and curl's indented JSON,
// YAML and Table of the whole list are byte for byte the same from both.
//
// BENCH_SCALE_OBJECTS=N (at least 1000; 1 or 1m for 1,000,000) adds the scale measurement on a server
// of its own: N custom objects of one CRD (BENCH_SCALE_KIND=configmaps: ConfigMaps) seeded in 100
// namespaces, a restart, unpaged LISTs alone and 8 at once with
// GETs meanwhile, a paged LIST and 10,000 watchers. BENCH_SCALE_REPRESENTATIONS=pretty,yaml,table,
// metadata (or all) measures the unpaged LISTs again in those representations besides compact JSON.
// BENCH_SCALE_STRESS=1 then abuses the loaded server as issue 38 does: 8 YAML LISTs whose clients go
// after 1 s (how soon the server stops working for them, how soon its memory returns) and 32 curl
// LISTs at once (each whole or a 429, never a reset; peak RSS beside the budget). Every scale run
// counts etcd's applies over 1 s in the server's log.
// BENCH_SCALE_OBJECTS=ci is CI's smaller version, whose guards (memory under the concurrent LISTs,
// GET p99, first byte) BENCH_GUARD=1 judges, for every representation measured.
//
// Besides the operations, a run measures start-up and memory, an overload of ten times
// --max-requests-inflight, and `kubectl get` of the listed objects (when kubectl is on PATH; 1
// warm-up and 5 timed runs, 3 in a short run); BENCH_ONLY skips all four.
//
// A run is short unless BENCH_FULL=1, so that every `go test ./...` stays quick; -short keeps it short
// whatever the environment, and BENCH_DURATION wins over both. A relative BENCH_JSON is relative to
// this directory. Failed requests (kubectl runs and overload answers included) always fail the test;
// ratios fail it only with BENCH_GUARD=1, which measures an operation below its floor again, up to
// bench.GuardAttempts times in all, and judges it by its best attempt: CI runs it so.
package bench
