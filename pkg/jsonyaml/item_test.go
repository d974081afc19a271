package jsonyaml

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// scaleObject is an object of the bench harness's scale CRD as a LIST writes it.
const scaleObject = `{"apiVersion":"example.com/v1","kind":"ScaleObject","metadata":{"creationTimestamp":"2026-12-02T06:00:00Z","generation":1,"labels":{"app":"bench"},"managedFields":[{"apiVersion":"example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:index":{},"f:payload":{}}},"manager":"bench","operation":"Update","time":"2026-12-02T06:00:00Z"}],"name":"so-0000001","namespace":"scale-01","resourceVersion":"12345","uid":"6f0b3c1e-0001-4a57-9b0e-1f0b3d0d5a11"},"spec":{"index":1,"payload":"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"}}`

// itemCases are items of a list, each written by AppendItem or declined (want false); either way
// what it writes must be Convert's.
var itemCases = []struct {
	name, item string
	want       bool
}{
	{"scale object", scaleObject, true},
	{"configmap", `{"data":{"key":"value-1-0123","empty":"","a b":"c d"},"metadata":{"name":"cm-1","namespace":"bench","uid":"12345678-aaaa-bbbb-cccc-1234567890ab","resourceVersion":"77","creationTimestamp":"2026-12-03T07:00:00Z"}}`, true},
	{"keys sorted as yaml sorts them", `{"a10":1,"a9":2,"B":3,"b":4,"10":5,"9":6,"-":7,"a1":9,"_x":10,"x_":11,"0":12,"a100":13,"a1.5":15,"a1-":16}`, true},
	{"letters and digits that yaml.v2 orders in a cycle", `{"a10":1,"a1x":2,"a9":3}`, false},
	{"letters after digits, no two digits in a row", `{"k8s-app":1,"a1":2,"a9":3,"b2c":4}`, true},
	{"strings that read as other types", `{"s":["123","-1","+1","0x1F","0o17","0b101","-0b101","1_000","1.5",".5","1e3",".inf","-.Inf",".nan","yes","No","on","OFF","y","n","~","null","NULL","true","False","2026-12-02","2026-12-02T06:00:00Z","2026-1-2 3:04:05","12:30","-1:20","1:2:3.5","<<","0","00","+","-","."]}`, true},
	{"strings the emitter quotes", `{"s":["- a","-a","a: b","a:b","a :b",":a",": a","?a","? a","#a","a#b","a #b","[a","a]","{a","a}","&a","*a","!a","|a",">a","'a","a'b","%a","@a","` + "`a" + `","---","--- a","...a","a,b",",a"," a","a ","a b","it's"]}`, true},
	{"nesting", `{"a":[[],[{}],{"b":[1,{"c":null}]},[[1,2],[3]]],"d":{"e":{"f":{}}},"g":[{"h":[{"i":1}]}],"t":true,"f":false,"z":null}`, true},
	{"numbers", `{"n":[0,-0,1,-1,123456789012345678,1234567890123456789,-9223372036854775808,9223372036854775808,18446744073709551615,18446744073709551616,1.5,-2.25e-3,1e5,3.0,1e-400,0.1]}`, true},
	{"a number no float holds", `{"n":1E400}`, false},
	{"a long string without spaces", `{"k":"` + strings.Repeat("x", 200) + `"}`, true},
	{"a long key", `{"` + strings.Repeat("k", 128) + `":1}`, true},
	{"a short string with spaces", `{"description":"a few words that fit on the line"}`, true},
	{"a string with spaces the emitter folds", `{"description":"` + strings.Repeat("word ", 20) + `"}`, false},
	{"a key the emitter writes as complex", `{"` + strings.Repeat("k", 129) + `":1}`, false},
	{"an escaped string", `{"a":"line\nbreak"}`, false},
	{"a quote in a quoted string", `{"a":"1\"2"}`, false},
	{"unicode", `{"a":"é"}`, false},
	{"a repeated name", `{"a":1,"a":2}`, false},
	{"keys whose digits start with a zero", `{"a01":1,"a1":2}`, false},
	{"an array item", `[1,"a",{"b":[]}]`, true},
}

func TestAppendItem(t *testing.T) {
	var w Writer
	for _, tt := range itemCases {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := w.AppendItem([]byte("prefix"), []byte(tt.item))
			if ok != tt.want {
				t.Fatalf("AppendItem wrote it: %t, want %t (%q)", ok, tt.want, got)
			}
			if !ok {
				if string(got) != "prefix" {
					t.Fatalf("a declined item left %q, want the prefix alone", got)
				}
				return
			}
			want := convertedItem(t, []byte(tt.item))
			if string(got) != "prefix"+want {
				t.Errorf("got\n%s\nwant\n%s", got, "prefix"+want)
			}
		})
	}
}

// convertedItem is Convert's YAML of item as a list's element.
func convertedItem(t testing.TB, item []byte) string {
	out, err := Convert([]byte(`{"items":[` + string(item) + `]}`))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	_, rest, _ := bytes.Cut(out, []byte("\n"))
	return string(rest)
}

// FuzzAppendItem holds AppendItem to Convert: whatever it writes is what Convert writes.
func FuzzAppendItem(f *testing.F) {
	for _, c := range itemCases {
		f.Add([]byte(c.item))
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		if !json.Valid(item) || len(item) == 0 {
			return
		}
		var v any
		if err := json.Unmarshal(item, &v); err != nil {
			return
		}
		var w Writer
		got, ok := w.AppendItem(nil, item)
		if !ok {
			return
		}
		if want := convertedItem(t, item); string(got) != want && deterministic(t, item, want) {
			t.Fatalf("%s:\ngot  %q\nwant %q", item, got, want)
		}
	})
}

// deterministic reports whether Convert writes item as want every time: for some keys yaml.v2's
// order is not a strict one, and then its output depends on the random order of a map's keys.
func deterministic(t *testing.T, item []byte, want string) bool {
	for range 20 {
		if convertedItem(t, item) != want {
			return false
		}
	}
	return true
}

func BenchmarkAppendItem(b *testing.B) {
	item := []byte(scaleObject)
	b.Run("Convert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Convert([]byte(`{"items":[` + string(item) + `]}`))
		}
	})
	b.Run("AppendItem", func(b *testing.B) {
		b.ReportAllocs()
		var w Writer
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			if _, ok := w.AppendItem(buf[:0], item); !ok {
				b.Fatal("declined")
			}
		}
	})
}
