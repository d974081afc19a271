package handlers_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/serve/handlers"
)

// bigConfigMap is a ConfigMap of about 200 KiB: one object whose GET is above the threshold.
func bigConfigMap(name string) string {
	return configMap(name, `{"big":"`+strings.Repeat("0123456789abcdef", 200<<10/16)+`"}`)
}

// TestResponseCompression checks kube's APIResponseCompression on the wire: gzip for a response over
// 128 KiB to a client that sends Accept-Encoding: gzip, in every encoding and for errors, never for a
// watch, and bytes that decompress to exactly the uncompressed response. The headers are those of
// kube-apiserver v1.37.2 for a LIST of 400 ConfigMaps (300 KB): Content-Encoding: gzip and
// Vary: Accept-Encoding, no Content-Length; neither header on a response it leaves alone.
// listRV finds a list's own resourceVersion in JSON, compact or ?pretty (it comes first), and in YAML
// (last, top level).
var listRV = regexp.MustCompile(`(?s)^(\{\s*"kind":\s*"[^"]*",\s*"apiVersion":\s*"[^"]*",\s*"metadata":\s*\{\s*"resourceVersion":\s*")\d+|(\nmetadata:\n  resourceVersion: ")\d+"\n$`)

// tableAge finds a Table row's AGE cell ("9s", "10s", "2m", "2m9s"), which grows between two
// requests: the two bodies of a list of a thousand objects created in one go differed by a byte per
// row once their ages passed 9s between the requests, and by more once a slow race run took their
// ages past two minutes, where kube's HumanDuration adds the seconds ("2m9s", "2m11s").
var tableAge = regexp.MustCompile(`,"(?:\d+[smhdy])+"\]`)

// sameList says whether two bodies of one list are the same but for what moves between requests.
func sameList(a, b string) bool {
	norm := func(s string) string {
		return tableAge.ReplaceAllString(listRV.ReplaceAllString(s, "${1}${2}N"), `,"AGE"]`)
	}
	return norm(a) == norm(b)
}

func TestResponseCompression(t *testing.T) {
	a := start(t)
	createConfigMaps(t, a.InsecureURL, 1000)
	a.do("POST", cmPath, bigConfigMap("zz-big")).expect(t, http.StatusCreated)

	const (
		table   = "Accept: application/json;as=Table;g=meta.k8s.io;v=v1"
		partial = "Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
		yaml    = "Accept: application/yaml"
		gz      = "Accept-Encoding: gzip"
	)
	for _, tt := range []struct {
		name     string
		path     string
		headers  []string
		code     int
		wantGzip bool
	}{
		// 1,001 objects, about 840 KB: streamed in chunks (listbody.go).
		{name: "list", path: cmPath, headers: []string{gz}, code: 200, wantGzip: true},
		{name: "list without Accept-Encoding", path: cmPath, code: 200},
		{name: "list, gzip among others", path: cmPath, headers: []string{"Accept-Encoding: br, gzip, deflate"}, code: 200, wantGzip: true},
		// kube-apiserver v1.37.2 answers "gzip;q=1.0" uncompressed: it compares whole tokens.
		{name: "list, gzip with a q-value", path: cmPath, headers: []string{"Accept-Encoding: gzip;q=1.0"}, code: 200},
		// About 190 KB: above the threshold, below a chunk, so written whole.
		{name: "list of one chunk", path: cmPath + "?limit=300", headers: []string{gz}, code: 200, wantGzip: true},
		{name: "small list", path: cmPath + "?limit=2", headers: []string{gz}, code: 200},
		{name: "list pretty", path: cmPath + "?pretty=true", headers: []string{gz}, code: 200, wantGzip: true},
		{name: "list YAML", path: cmPath, headers: []string{gz, yaml}, code: 200, wantGzip: true},
		{name: "list Table", path: cmPath, headers: []string{gz, table}, code: 200, wantGzip: true},
		{name: "list metadata", path: cmPath, headers: []string{gz, partial}, code: 200, wantGzip: true},
		{name: "get big", path: cmPath + "/zz-big", headers: []string{gz}, code: 200, wantGzip: true},
		{name: "get small", path: cmPath + "/cm0001", headers: []string{gz}, code: 200},
		{name: "error", path: cmPath + "/nope", headers: []string{gz}, code: 404},
		{name: "bad request", path: cmPath + "?resourceVersion=x&resourceVersionMatch=Exact", headers: []string{gz}, code: 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := a.do("GET", tt.path, "", tt.headers...)
			if resp.code != tt.code {
				t.Fatalf("status %d, want %d: %.300s", resp.code, tt.code, resp.body)
			}
			h := resp.header
			if !tt.wantGzip {
				if h.Get("Content-Encoding") != "" || h.Get("Vary") != "" {
					t.Errorf("Content-Encoding %q, Vary %q; want neither", h.Get("Content-Encoding"), h.Get("Vary"))
				}
				return
			}
			// No Content-Length but the one net/http adds to a body that ends within its first 2 KiB,
			// which kube's get the same way: never the uncompressed length.
			if cl := h.Get("Content-Length"); h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" ||
				(cl != "" && cl != strconv.Itoa(len(resp.body))) {
				t.Errorf("Content-Encoding %q, Vary %q, Content-Length %q (%d bytes sent); want gzip, Accept-Encoding and the compressed length or none",
					h.Get("Content-Encoding"), h.Get("Vary"), cl, len(resp.body))
			}
			got := handlers.Gunzip(t, []byte(resp.body))
			var plainHeaders []string
			for _, h := range tt.headers {
				if !strings.HasPrefix(h, "Accept-Encoding:") {
					plainHeaders = append(plainHeaders, h)
				}
			}
			plain := a.do("GET", tt.path, "", plainHeaders...)
			if plain.header.Get("Content-Encoding") != "" {
				t.Fatal("compressed without Accept-Encoding")
			}
			// The list's own resourceVersion may move between the two requests (the server's
			// controllers write), and a Table's ages; the items may not.
			if !sameList(string(got), plain.body) {
				t.Errorf("decompressed body (%d bytes) differs from the uncompressed one (%d bytes)", len(got), len(plain.body))
			}
			if len(plain.body) <= 128<<10 {
				t.Errorf("compressed a response of %d bytes", len(plain.body))
			}
		})
	}

	// Watches stream events as they happen: kube never compresses them, whatever their size.
	for _, path := range []string{
		cmPath + "?watch=true&timeoutSeconds=1",
		"/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=1",
		cmPath + "?watch=true&timeoutSeconds=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
	} {
		t.Run("watch "+path, func(t *testing.T) {
			resp := a.do("GET", path, "", gz)
			if resp.code != 200 || resp.header.Get("Content-Encoding") != "" || resp.header.Get("Vary") != "" {
				t.Errorf("status %d, Content-Encoding %q, Vary %q; want 200 and neither header",
					resp.code, resp.header.Get("Content-Encoding"), resp.header.Get("Vary"))
			}
			if !strings.Contains(resp.body, `"type":"ADDED"`) {
				t.Errorf("watch sent no events: %.300s", resp.body)
			}
		})
	}
}

// TestResponseCompressionGateOff checks that --feature-gates APIResponseCompression=false turns
// compression off.
func TestResponseCompressionGateOff(t *testing.T) {
	a := start(t, "--feature-gates", "APIResponseCompression=false")
	a.do("POST", cmPath, bigConfigMap("zz-big")).expect(t, http.StatusCreated)
	for _, path := range []string{cmPath, cmPath + "/zz-big"} {
		resp := a.do("GET", path, "", "Accept-Encoding: gzip")
		if resp.code != 200 || resp.header.Get("Content-Encoding") != "" || len(resp.body) <= 128<<10 {
			t.Errorf("GET %s: status %d, Content-Encoding %q, %d bytes; want 200, none, the whole body",
				path, resp.code, resp.header.Get("Content-Encoding"), len(resp.body))
		}
	}
}

// TestSameList pins what sameList forgives: the list's own resourceVersion in each encoding (a
// ?pretty one moved between two requests in a race run) and a Table row's age, never an item.
func TestSameList(t *testing.T) {
	tests := []struct {
		name, a, b string
		same       bool
	}{
		{"compact rv", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"41"},"items":[]}`,
			`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[]}`, true},
		{"pretty rv", "{\n  \"kind\": \"ConfigMapList\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"resourceVersion\": \"41\"\n  },\n  \"items\": []\n}\n",
			"{\n  \"kind\": \"ConfigMapList\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"resourceVersion\": \"42\"\n  },\n  \"items\": []\n}\n", true},
		{"yaml rv", "apiVersion: v1\nitems: []\nkind: ConfigMapList\nmetadata:\n  resourceVersion: \"41\"\n",
			"apiVersion: v1\nitems: []\nkind: ConfigMapList\nmetadata:\n  resourceVersion: \"42\"\n", true},
		{"table age", `{"rows":[{"cells":["a","9s"]}]}`, `{"rows":[{"cells":["a","2m9s"]}]}`, true},
		{"an item's rv", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"41"},"items":[{"metadata":{"resourceVersion":"7"}}]}`,
			`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"41"},"items":[{"metadata":{"resourceVersion":"8"}}]}`, false},
	}
	for _, tt := range tests {
		if got := sameList(tt.a, tt.b); got != tt.same {
			t.Errorf("%s: sameList %v, want %v", tt.name, got, tt.same)
		}
	}
}
