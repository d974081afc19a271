package handlers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestListRepresentationsStream checks that every representation of a LIST too long for one chunk
// streams (no Content-Length: sent in chunks, never built whole) and that its bytes are those the
// whole body's conversion makes: indented JSON is encoding/json's Indent of the compact list, and
// YAML is sigs.k8s.io/yaml's JSONToYAML of it, as writeJSON converts a body (issue 38).
func TestListRepresentationsStream(t *testing.T) {
	a := start(t)
	createConfigMaps(t, a.InsecureURL, 800) // about 330 KB of compact JSON: two chunks
	for i := range 600 {
		a.do("POST", "/apis/example.com/v1/namespaces/default/widgets",
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w`+strings.Repeat("x", 200)+strconv.Itoa(i)+`"},"spec":{"size":"`+strings.Repeat("big ", 60)+`"}}`).
			expect(t, http.StatusCreated)
	}
	const (
		table       = "Accept: application/json;as=Table;g=meta.k8s.io;v=v1"
		partial     = "Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
		yamlOf      = "Accept: application/yaml"
		partialYAML = "Accept: application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	for _, path := range []string{cmPath, "/apis/example.com/v1/namespaces/default/widgets"} {
		compact := a.do("GET", path, "")
		rv := listResourceVersion(t, compact.body)
		at := path + "?resourceVersion=" + rv + "&resourceVersionMatch=Exact"
		for _, tt := range []struct {
			name, accept, query string
			// indented compares the body compacted, once it is known to be Indent's layout.
			indented bool
			// want is the body the representation must have, from the compact one.
			want func(t *testing.T) string
		}{
			{name: "compact JSON", want: func(*testing.T) string { return compact.body }},
			{name: "indented JSON", query: "&pretty=true", want: func(t *testing.T) string { return indent(t, compact.body) }},
			{name: "YAML", accept: yamlOf, want: func(t *testing.T) string { return toYAML(t, compact.body) }},
			{name: "metadata", accept: partial},
			{name: "metadata indented", accept: partial, query: "&pretty=true",
				want: func(t *testing.T) string { return indent(t, a.do("GET", at, "", partial).body) }},
			{name: "metadata YAML", accept: partialYAML,
				want: func(t *testing.T) string { return toYAML(t, a.do("GET", at, "", partial).body) }},
			{name: "Table", accept: table},
			// A Table's ages move between two requests: its indented body is compared compacted.
			{name: "Table indented", accept: table, query: "&pretty=true", indented: true,
				want: func(t *testing.T) string { return a.do("GET", at, "", table).body }},
		} {
			t.Run(path+" "+tt.name, func(t *testing.T) {
				var headers []string
				if tt.accept != "" {
					headers = append(headers, tt.accept)
				}
				got := a.do("GET", at+tt.query, "", headers...)
				if got.code != http.StatusOK {
					t.Fatalf("status %d: %.300s", got.code, got.body)
				}
				if cl := got.header.Get("Content-Length"); cl != "" {
					t.Errorf("Content-Length %s: the list was built whole, not streamed", cl)
				}
				if tt.want == nil {
					return
				}
				body := got.body
				if tt.indented {
					var b bytes.Buffer
					if err := json.Compact(&b, []byte(body)); err != nil {
						t.Fatal(err)
					}
					b.WriteByte('\n')
					if indent(t, b.String()) != body {
						t.Fatalf("the body is not laid out as encoding/json's Indent")
					}
					body = b.String()
				}
				if want := tt.want(t); !sameList(body, want) {
					t.Errorf("the streamed body differs from the whole body's conversion (%d bytes, want %d)\n%s", len(body), len(want), firstDifference(body, want))
				}
			})
		}
	}
}

func listResourceVersion(t *testing.T, body string) string {
	t.Helper()
	var l struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil || l.Metadata.ResourceVersion == "" {
		t.Fatalf("no list resourceVersion (%v) in %.200s", err, body)
	}
	return l.Metadata.ResourceVersion
}

func indent(t *testing.T, compact string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(strings.TrimSuffix(compact, "\n")), "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func toYAML(t *testing.T, compact string) string {
	t.Helper()
	y, err := yaml.JSONToYAML([]byte(compact))
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
}

func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-120)
	return "at byte " + strconv.Itoa(i) + ":\ngot  " + a[lo:min(len(a), i+120)] + "\nwant " + b[lo:min(len(b), i+120)]
}
