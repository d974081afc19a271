package zapslog

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func newText(level slog.Level) (*bytes.Buffer, *slog.Logger) {
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	return &buf, slog.New(h)
}

func TestForwardsFieldsInOrder(t *testing.T) {
	buf, logger := newText(slog.LevelDebug)
	lg := New(logger, Options{Level: slog.LevelDebug}).Named("raft").With(zap.String("member", "m1"))
	lg.Warn("slow apply", zap.Duration("took", 150*time.Millisecond), zap.Error(errors.New("disk")), zap.Strings("urls", []string{"a", "b"}), zap.Int64("rev", 7))
	want := `level=WARN msg="slow apply" logger=raft member=m1 took=150ms error=disk urls="[a b]" rev=7` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLevels(t *testing.T) {
	tests := []struct {
		min     slog.Leveler
		handler slog.Level
		want    string
	}{
		{nil, slog.LevelDebug, "WARN w|ERROR e|ERROR dp"},
		{slog.LevelInfo, slog.LevelDebug, "INFO i|WARN w|ERROR e|ERROR dp"},
		{slog.LevelDebug, slog.LevelDebug, "DEBUG d|INFO i|WARN w|ERROR e|ERROR dp"},
		{slog.LevelDebug, slog.LevelError, "ERROR e|ERROR dp"},
	}
	for _, tt := range tests {
		buf, logger := newText(tt.handler)
		lg := New(logger, Options{Level: tt.min})
		lg.Debug("d")
		lg.Info("i")
		lg.Warn("w")
		lg.Error("e")
		lg.DPanic("dp") // a development panic only logs in a production logger
		var got []string
		for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
			line = strings.TrimPrefix(line, "level=")
			line = strings.Replace(line, " msg=", " ", 1)
			got = append(got, line)
		}
		if strings.Join(got, "|") != tt.want {
			t.Errorf("min %v, handler %v: got %q, want %q", tt.min, tt.handler, strings.Join(got, "|"), tt.want)
		}
	}
}

func TestDemote(t *testing.T) {
	buf, logger := newText(slog.LevelDebug)
	demote := func(e zapcore.Entry, fields []zapcore.Field) bool {
		return e.Message == "expected" || (len(fields) > 0 && fields[0].Key == "error" && strings.Contains(fields[0].Interface.(error).Error(), "closed"))
	}
	New(logger, Options{Level: slog.LevelDebug, Demote: demote}).Error("expected")
	New(logger, Options{Level: slog.LevelDebug, Demote: demote}).Warn("serve", zap.Error(errors.New("listener closed")))
	New(logger, Options{Level: slog.LevelDebug, Demote: demote}).Warn("serve", zap.Error(errors.New("boom")))
	// At warn level, a demoted entry disappears.
	New(logger, Options{Demote: demote}).Error("expected")
	want := "level=DEBUG msg=expected\nlevel=DEBUG msg=serve error=\"listener closed\"\nlevel=WARN msg=serve error=boom\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

func TestNilLoggerDiscards(t *testing.T) {
	lg := New(nil, Options{})
	if lg.Core().Enabled(zapcore.ErrorLevel) {
		t.Error("a nil slog logger gives an enabled zap logger")
	}
}
