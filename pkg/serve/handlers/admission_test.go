package handlers

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestWarningRecorder(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name  string
		texts []string
		want  []string
	}{
		{"one", []string{"a"}, []string{`299 - "a"`}},
		{"empty ones are dropped", []string{"", "a"}, []string{`299 - "a"`}},
		{"duplicates are dropped", []string{"a", "b", "a"}, []string{`299 - "a"`, `299 - "b"`}},
		{"quotes are escaped", []string{`say "hi"`}, []string{`299 - "say \"hi\""`}},
		// Over 4096 runes in all, kube starts again with every warning cut to 256 runes.
		{"truncated past the total", func() []string {
			var out []string
			for i := range 15 {
				out = append(out, string(rune('a'+i))+long)
			}
			return out
		}(), func() []string {
			var out []string
			for i := range 15 {
				out = append(out, `299 - "`+(string(rune('a'+i)) + long)[:256]+`"`)
			}
			return out
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := &warningRecorder{w: w}
			for _, text := range tt.texts {
				r.AddWarning("", text)
			}
			if got := w.Header().Values("Warning"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %d headers %q\nwant %d %q", len(got), got, len(tt.want), tt.want)
			}
		})
	}
}
