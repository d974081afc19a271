package differential

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The normaliser works on an ordered tree built from encoding/json's token stream. Scalars keep
// their raw bytes, so a string kube writes as "\u003c" and apictl writes as "<" still differ, and
// objects keep their keys in the order the server wrote them. Only values that change from run to
// run are replaced, each with a placeholder string such as "<rv>".

// node is one JSON value: an object (keys and kids), an array (kids) or a scalar (raw).
type node struct {
	kind byte // '{', '[' or 0 for a scalar
	raw  []byte
	keys [][]byte // raw key tokens, quotes included
	kids []*node
}

// str returns the decoded string of a string scalar, and whether it is one.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != 0 || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(n.raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// key returns the decoded i-th key of an object.
func (n *node) key(i int) string {
	var s string
	_ = json.Unmarshal(n.keys[i], &s)
	return s
}

// field returns the value of key k in an object, or nil.
func (n *node) field(k string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := range n.keys {
		if n.key(i) == k {
			return n.kids[i]
		}
	}
	return nil
}

// parseJSON reads one JSON value from data; trailing whitespace is allowed, anything else is not.
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, data)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, data []byte) (*node, error) {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{kind: '{'}
		for dec.More() {
			ks := dec.InputOffset()
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			n.keys = append(n.keys, rawToken(data, ks, dec.InputOffset()))
			v, err := parseValue(dec, data)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, v)
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &node{kind: '['}
		for dec.More() {
			v, err := parseValue(dec, data)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return &node{raw: rawToken(data, start, dec.InputOffset())}, nil
}

// rawToken is data[from:to] without the separators and white space the decoder skipped first.
func rawToken(data []byte, from, to int64) []byte {
	return bytes.TrimLeft(data[from:to], " \t\r\n,:")
}

// encode writes n compactly, keeping key order and raw scalars.
func (n *node) encode(b *bytes.Buffer) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(n.keys[i])
			b.WriteByte(':')
			n.kids[i].encode(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, k := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			k.encode(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// sortKeys orders every object's keys, recursively, by their raw bytes.
func (n *node) sortKeys() {
	if n.kind == '{' {
		idx := make([]int, len(n.keys))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return bytes.Compare(n.keys[idx[i]], n.keys[idx[j]]) < 0 })
		keys, kids := make([][]byte, len(idx)), make([]*node, len(idx))
		for i, k := range idx {
			keys[i], kids[i] = n.keys[k], n.kids[k]
		}
		n.keys, n.kids = keys, kids
	}
	for _, k := range n.kids {
		k.sortKeys()
	}
}

// setString replaces a scalar with a JSON string written without HTML escaping.
func (n *node) setString(s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	*n = node{raw: bytes.TrimRight(b.Bytes(), "\n")}
}

// normalizer replaces the values that differ from run to run. It lives for one run of the corpus:
// generated names seen in one response are replaced in every later one.
type normalizer struct {
	generated map[string]string // generated name -> prefix + "<gen>"
}

func newNormalizer() *normalizer { return &normalizer{generated: map[string]string{}} }

var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	messageRVs = []struct {
		re   *regexp.Regexp
		repl string
	}{
		{regexp.MustCompile(`(ResourceVersion in (?:precondition|object meta): )\d+`), "${1}<rv>"},
		{regexp.MustCompile(`(too old resource version: )\d+ \(\d+\)`), "${1}<rv> (<rv>)"},
		{regexp.MustCompile(`(Too large resource version: )\d+(, current: )\d+`), "${1}<rv>${2}<rv>"},
		{regexp.MustCompile(`(the ResourceVersion in the precondition \()\d+(\) does not match the ResourceVersion in record \()\d+`), "${1}<rv>${2}<rv>"},
		// Objects quoted inside messages (a strict patch's "Invalid value").
		// "resourceVersion":"1", \"resourceVersion\":\"1\" (JSON quoted with %q) and YAML's resourceVersion: "1".
		{regexp.MustCompile(`(resourceVersion\\?"?: ?\\?")\d+(\\?")`), `${1}<rv>${2}`},
	}
	// timeRE finds timestamps inside longer strings; a string that is only a timestamp is data.
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	// timeKeys are set by the server at write time.
	timeKeys = map[string]bool{"creationTimestamp": true, "deletionTimestamp": true}
)

// normalize rewrites n in place. path is the JSON path of n ("" for the root, "/a/0/b" below);
// ignore lists paths whose values are replaced by "<ignored>" (an element "*" matches any key).
func (z *normalizer) normalize(n *node, ignore []string) {
	z.collectGenerated(n)
	z.walk(n, "", "", ignore)
}

// collectGenerated remembers every metadata.name made from metadata.generateName.
func (z *normalizer) collectGenerated(n *node) {
	if n == nil || n.kind == 0 {
		return
	}
	if n.kind == '{' {
		gen, okG := n.field("generateName").str()
		name, okN := n.field("name").str()
		if okG && okN && gen != "" && strings.HasPrefix(name, gen) && len(name) == len(gen)+5 {
			z.generated[name] = gen + "<gen>"
		}
	}
	for _, k := range n.kids {
		z.collectGenerated(k)
	}
}

// walk normalises n at path; parentKey is the key n (or the array n is an element of) sits under,
// so the "time" of metadata.managedFields entries is recognised.
func (z *normalizer) walk(n *node, path, parentKey string, ignore []string) {
	if matchPath(path, ignore) {
		n.setString("<ignored>")
		return
	}
	switch n.kind {
	case '{':
		for i, kid := range n.kids {
			k := n.key(i)
			if s, ok := kid.str(); ok && s != "" {
				switch {
				case k == "resourceVersion":
					kid.setString("<rv>")
					continue
				case k == "uid":
					kid.setString("<uid>")
					continue
				case timeKeys[k], k == "time" && parentKey == "managedFields":
					kid.setString("<time>")
					continue
				case k == "continue":
					kid.setString("<continue>")
					continue
				case k == "serverAddress":
					kid.setString("<address>")
					continue
				}
			}
			z.walk(kid, path+"/"+k, k, ignore)
		}
	case '[':
		for i, kid := range n.kids {
			z.walk(kid, fmt.Sprintf("%s/%d", path, i), parentKey, ignore)
		}
	default:
		s, ok := n.str()
		if !ok {
			return
		}
		t := z.text(s)
		if t != s {
			n.setString(t)
		}
	}
}

// text normalises a free string: generated names, UIDs and resource versions inside messages.
func (z *normalizer) text(s string) string {
	for name, repl := range z.generated {
		s = strings.ReplaceAll(s, name, repl)
	}
	s = uuidRE.ReplaceAllString(s, "<uid>")
	if !timeRE.MatchString(s) || timeRE.FindString(s) != s {
		s = timeRE.ReplaceAllString(s, "<time>")
	}
	for _, m := range messageRVs {
		s = m.re.ReplaceAllString(s, m.repl)
	}
	return s
}

func matchPath(path string, patterns []string) bool {
	for _, p := range patterns {
		pp, ps := strings.Split(p, "/"), strings.Split(path, "/")
		if len(pp) != len(ps) {
			continue
		}
		ok := true
		for i := range pp {
			if pp[i] != "*" && pp[i] != ps[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// normalizeJSON parses, normalises and re-encodes one JSON document compactly.
func (z *normalizer) normalizeJSON(data []byte, ignore []string) ([]byte, error) {
	n, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	z.normalize(n, ignore)
	var b bytes.Buffer
	n.encode(&b)
	return b.Bytes(), nil
}

func TestNormalizeKeepsOrderAndRawScalars(t *testing.T) {
	in := `{"z":1,"metadata":{"name":"a-x7k2q","generateName":"a-","uid":"0b7c0f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",` +
		`"resourceVersion":"42","creationTimestamp":"2026-01-01T00:00:00Z","managedFields":[{"manager":"m","time":"2026-01-01T00:00:00Z"}]},` +
		`"a":"\u003cb\u003e","message":"configmaps \"a-x7k2q\" ... ResourceVersion in object meta: 17",` +
		`"q":"{\\\"resourceVersion\\\":\\\"12\\\"} at 2026-01-01T00:00:00Z","y":"resourceVersion: \"3\"\n","t":"2026-01-01T00:00:00Z","list":[{"continue":"abc"}],"n":1.50}` + "\n"
	got, err := newNormalizer().normalizeJSON([]byte(in), []string{"/z"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":"<ignored>","metadata":{"name":"a-<gen>","generateName":"a-","uid":"<uid>","resourceVersion":"<rv>",` +
		`"creationTimestamp":"<time>","managedFields":[{"manager":"m","time":"<time>"}]},"a":"\u003cb\u003e",` +
		`"message":"configmaps \"a-<gen>\" ... ResourceVersion in object meta: <rv>",` +
		`"q":"{\\\"resourceVersion\\\":\\\"<rv>\\\"} at <time>","y":"resourceVersion: \"<rv>\"\n","t":"2026-01-01T00:00:00Z","list":[{"continue":"<continue>"}],"n":1.50}`
	if string(got) != want {
		t.Errorf("normalised:\n got %s\nwant %s", got, want)
	}
}
