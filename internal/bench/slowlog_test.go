package bench

import (
	"testing"
	"time"
)

func TestSlowApplies(t *testing.T) {
	tests := []struct {
		name     string
		writes   []string
		wantOver int
		wantMax  time.Duration
	}{
		{name: "nothing", writes: []string{"level=INFO msg=ready\n"}},
		{name: "under the limit", writes: []string{`time=x level=WARN msg="apply request took too long" took=612.3ms expected-duration=100ms` + "\n"}, wantMax: 612300 * time.Microsecond},
		{name: "over, split across writes", writes: []string{`level=WARN msg="apply request took`, ` too long" took=4.35s` + "\nnext\n"}, wantOver: 1, wantMax: 4350 * time.Millisecond},
		{name: "unreadable time counts", writes: []string{`msg="apply request took too long" took=?` + "\n"}, wantOver: 1},
		{name: "a line not ended yet waits", writes: []string{`msg="apply request took too long" took=2s`}},
		{name: "other slow messages are not applies", writes: []string{`msg="request stats" took=3s` + "\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s slowApplies
			for _, w := range tt.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			over, slowest := s.read()
			if over != tt.wantOver || slowest != tt.wantMax {
				t.Errorf("read() = %d, %s; want %d, %s", over, slowest, tt.wantOver, tt.wantMax)
			}
		})
	}
}
