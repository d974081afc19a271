package jsonscan

import (
	"strings"
	"testing"
)

func TestWalkObject(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // members as key=value;
		ok   bool
	}{
		{in: `{}`, ok: true},
		{in: ` { "a" : 1 , "b":{"c":[1,"}"]}, "d":"x\"y" } `, want: `a=1;b={"c":[1,"}"]};d="x\"y";`, ok: true},
		{in: `{"a":1,}`, want: "a=1;"},
		{in: `{"a\u0062":1}`},
		{in: `{"a":1`, want: "a=1;"},
		{in: `{"a":"x}`},
		{in: `[1]`},
		{in: ``},
	} {
		var got strings.Builder
		ok := WalkObject([]byte(tt.in), func(key, val []byte) bool {
			got.WriteString(string(key) + "=" + string(val) + ";")
			return true
		})
		if ok != tt.ok || got.String() != tt.want {
			t.Errorf("WalkObject(%s) = %q, %v; want %q, %v", tt.in, got.String(), ok, tt.want, tt.ok)
		}
	}
}

func TestWalkArray(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{in: `[]`, ok: true},
		{in: `[ 1, "a]" ,{"b":[2]} ]`, want: `1;"a]";{"b":[2]};`, ok: true},
		{in: `[1 2]`, want: "1;"},
		{in: `{}`},
	} {
		var got strings.Builder
		ok := WalkArray([]byte(tt.in), func(val []byte) bool {
			got.WriteString(string(val) + ";")
			return true
		})
		if ok != tt.ok || got.String() != tt.want {
			t.Errorf("WalkArray(%s) = %q, %v; want %q, %v", tt.in, got.String(), ok, tt.want, tt.ok)
		}
	}
}

func TestPlainString(t *testing.T) {
	for in, want := range map[string]bool{
		`"web-1.example"`: true, `""`: true, `"a<b"`: false, `"a&b"`: false, `"a\"b"`: false, `"a\nb"`: false,
		"\"caf\u00e9\"": false, "\"tab\t\"": false, `web`: false, `"`: false,
	} {
		if _, got := PlainString([]byte(in)); got != want {
			t.Errorf("PlainString(%s) = %v, want %v", in, got, want)
		}
	}
}
