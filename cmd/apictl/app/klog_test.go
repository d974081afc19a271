package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Info lines of kube's libraries show only from -v 4 on; their errors always do.
func TestDemotedKlogLevels(t *testing.T) {
	for _, tt := range []struct {
		level      slog.Level
		min        slog.Level
		wantLogged bool
	}{
		{slog.LevelInfo, slog.LevelInfo, false},
		{slog.LevelInfo, slog.LevelDebug, true},
		{slog.LevelWarn, slog.LevelInfo, true},
		{slog.LevelError, slog.LevelInfo, true},
	} {
		var out bytes.Buffer
		l := slog.New(demoted{slog.NewTextHandler(&out, &slog.HandlerOptions{Level: tt.min})})
		l.Log(t.Context(), tt.level, "refreshing policies")
		if got := strings.Contains(out.String(), "refreshing policies"); got != tt.wantLogged {
			t.Errorf("level %v with the logger at %v: logged %v, want %v (%q)", tt.level, tt.min, got, tt.wantLogged, out.String())
		}
	}
}
