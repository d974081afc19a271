package jsonyaml

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

var yamlCases = []string{
	`{}`, `[]`, `null`, `"s"`, `1`,
	`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":[]}`,
	`{"items":[{"metadata":{"name":"a","labels":{"b":"c"},"annotations":{}},"data":{"multi":"line one\nline two\n","colon":"a: b","hash":"# not a comment","quote":"'\"","empty":"","space":" lead","yes":"yes","no":"no","on":"on","null":"null","num":"123","float":"1.5","date":"2026-12-02","time":"2026-12-02T06:00:00Z"}}]}`,
	`{"n":[0,-0,1,-1,2147483648,9223372036854775807,9223372036854775808,18446744073709551615,18446744073709551616,-9223372036854775809,1.5,-2.25e-3,1e5,1E400,3.0,1e-400,0.1]}`,
	`{"b":[true,false,null],"nested":[[],[{}],{"a":[1,{"b":null}]}]}`,
	`{"unicode":"\u00e9\u4e2d😀","esc":"\b\f\t\r\\","html":"\u003cb\u003e\u0026","ctl":"\u0001\u007f\u0085\u2028"}`,
	// JSONToYAML refuses \/, which Go's encoders never write.
	`{"slash":"\/"}`,
	// JSONToYAML refuses a surrogate pair; Go's encoders never write one (they write UTF-8).
	`{"surrogates":"\ud83d\ude00"}`,
	`{"long":"` + "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh iiiiiiiii jjjjjjjjj" + `"}`,
	`{"keys":{"10":1,"9":2,"a10":3,"a9":4,"B":5,"b":6,"":7,"-":8,"true":9}}`,
	`{"dup":1,"dup":2}`,
}

// TestJSONToYAMLMatches checks Convert against sigs.k8s.io/yaml's JSONToYAML, which it replaces
// for speed: the same bytes for every value.
func TestJSONToYAMLMatches(t *testing.T) {
	for _, c := range yamlCases {
		want, werr := yaml.JSONToYAML([]byte(c))
		got, err := Convert([]byte(c))
		if werr != nil {
			t.Logf("%s: JSONToYAML fails (%v); Convert gives %q, %v", c, werr, got, err)
			continue
		}
		if err != nil || string(got) != string(want) {
			t.Errorf("%s:\ngot  %q (%v)\nwant %q", c, got, err, want)
		}
	}
}

// FuzzJSONToYAML compares Convert with JSONToYAML on any valid JSON that JSONToYAML converts.
func FuzzJSONToYAML(f *testing.F) {
	for _, c := range yamlCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, j []byte) {
		if !json.Valid(j) {
			return
		}
		want, err := yaml.JSONToYAML(j)
		if err != nil {
			return
		}
		got, err := Convert(j)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%q:\ngot  %q (%v)\nwant %q", j, got, err, want)
		}
	})
}

func BenchmarkJSONToYAML(b *testing.B) {
	item := []byte(`{"items":[{"apiVersion":"example.com/v1","kind":"ScaleObject","metadata":{"creationTimestamp":"2026-12-02T06:00:00Z","generation":1,"labels":{"app":"bench"},"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:index":{},"f:payload":{}}},"manager":"bench","operation":"Update","time":"2026-12-02T06:00:00Z"}],"name":"so-0000001","namespace":"scale-01","resourceVersion":"12345","uid":"6f0b3c1e-0001-4a57-9b0e-1f0b3d0d5a11"},"spec":{"index":1,"payload":"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"}}]}`)
	b.Run("sigs.k8s.io/yaml", func(b *testing.B) {
		for b.Loop() {
			_, _ = yaml.JSONToYAML(item)
		}
	})
	b.Run("Convert", func(b *testing.B) {
		for b.Loop() {
			_, _ = Convert(item)
		}
	})
}
