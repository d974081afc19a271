package handlers

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONIndenterMatchesIndent checks the streaming indenter against encoding/json's Indent, with
// the input cut at every place: an indented LIST must be the bytes it was before it streamed.
func TestJSONIndenterMatchesIndent(t *testing.T) {
	docs := []string{
		`{}`,
		`[]`,
		`{"a":1}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":[]}`,
		`{"items":[{"metadata":{"name":"a","labels":{}},"data":{"k":"v, with: {brackets} [and] \"quotes\" \\"}},{"x":[1,2.5e3,-3,true,false,null,[],{}]}]}`,
		`{"s":"\u00e9\\\"","t":"tab\there","n":null}`,
		`[[[]],[{}],{"a":[{"b":{}}]}]`,
		"{\"a\" : [ 1 , 2 ] }",
		`"just a string"`,
		`42`,
	}
	for _, doc := range docs {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(doc), "", "  "); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for cut := 0; cut <= len(doc); cut++ {
			for cut2 := cut; cut2 <= len(doc); cut2++ {
				var got bytes.Buffer
				var in jsonIndenter
				in.write(&got, []byte(doc[:cut]))
				in.write(&got, []byte(doc[cut:cut2]))
				in.write(&got, []byte(doc[cut2:]))
				if got.String() != want.String() {
					t.Fatalf("%s cut at %d and %d:\ngot  %q\nwant %q", doc, cut, cut2, got.String(), want.String())
				}
			}
		}
	}
}

// FuzzJSONIndenter compares the indenter with Indent on any valid JSON made compact, as the list
// writer's is, cut in two anywhere.
func FuzzJSONIndenter(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c\"]"}],"d":{}}`), uint(3))
	f.Fuzz(func(t *testing.T, raw []byte, cut uint) {
		var compact, want bytes.Buffer
		if json.Compact(&compact, raw) != nil {
			return
		}
		doc := compact.Bytes()
		if json.Indent(&want, doc, "", "  ") != nil {
			t.Fatalf("Indent refused what Compact made of %q", raw)
		}
		c := int(cut % uint(len(doc)+1))
		var got bytes.Buffer
		var in jsonIndenter
		in.write(&got, doc[:c])
		in.write(&got, doc[c:])
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q cut at %d:\ngot  %q\nwant %q", doc, c, got.Bytes(), want.Bytes())
		}
	})
}

func BenchmarkJSONIndenter(b *testing.B) {
	var list bytes.Buffer
	list.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":[`)
	for i := range 1000 {
		if i > 0 {
			list.WriteByte(',')
		}
		list.WriteString(`{"metadata":{"name":"cm","namespace":"default","uid":"0b6c1f1e-9c1a-4a57-9b0e-1f0b3d0d5a11","resourceVersion":"123","creationTimestamp":"2026-12-02T06:00:00Z","labels":{"app":"demo"}},"data":{"key":"value value value value"}}`)
	}
	list.WriteString(`]}`)
	src := list.Bytes()
	b.Run("stream", func(b *testing.B) {
		var out bytes.Buffer
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			out.Reset()
			var in jsonIndenter
			in.write(&out, src)
		}
	})
	b.Run("encoding/json.Indent", func(b *testing.B) {
		var out bytes.Buffer
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			out.Reset()
			_ = json.Indent(&out, src, "", "  ")
		}
	})
}
