// Package zapslog forwards the zap logs of etcd's server and client to a *slog.Logger, so that etcd
// speaks through apictl's logger instead of printing JSON lines of its own.
package zapslog

import (
	"context"
	"log/slog"
	"sort"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Options say which entries reach the slog logger.
type Options struct {
	// Level is the lowest level forwarded; nil means slog.LevelWarn.
	Level slog.Leveler
	// Demote, when set, names entries that are expected in apictl's setup although the library logs
	// them as warnings or errors (a listener closing on shutdown, a notice about a setting apictl
	// chose on purpose). They are logged at debug level instead.
	Demote func(entry zapcore.Entry, fields []zapcore.Field) bool
}

// New returns a zap logger that writes to logger. A nil logger discards everything.
func New(logger *slog.Logger, opts Options) *zap.Logger {
	if logger == nil {
		return zap.NewNop()
	}
	return zap.New(NewCore(logger, opts))
}

// NewCore returns a zapcore.Core that forwards entries to logger as opts say.
func NewCore(logger *slog.Logger, opts Options) zapcore.Core {
	if opts.Level == nil {
		opts.Level = slog.LevelWarn
	}
	return &core{logger: logger, opts: opts}
}

type core struct {
	logger *slog.Logger
	opts   Options
	// attrs are the fields given to With, already converted, in order.
	attrs []slog.Attr
}

var _ zapcore.Core = (*core)(nil)

func (c *core) Enabled(level zapcore.Level) bool {
	return c.enabled(toSlogLevel(level))
}

func (c *core) enabled(l slog.Level) bool {
	return l >= c.opts.Level.Level() && c.logger.Enabled(context.Background(), l)
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	clone := *c
	clone.attrs = append(append([]slog.Attr(nil), c.attrs...), toAttrs(fields)...)
	return &clone
}

func (c *core) Check(entry zapcore.Entry, checked *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(entry.Level) {
		return checked.AddCore(entry, c)
	}
	return checked
}

// Write forwards one entry. Demotion happens here because it may depend on the fields, which Check
// does not see; it only ever lowers a level, so Check lets through everything Write could keep.
func (c *core) Write(entry zapcore.Entry, fields []zapcore.Field) error {
	level := toSlogLevel(entry.Level)
	if c.opts.Demote != nil && level > slog.LevelDebug && c.opts.Demote(entry, fields) {
		level = slog.LevelDebug
		if !c.enabled(level) {
			return nil
		}
	}
	record := slog.NewRecord(entry.Time, level, entry.Message, 0)
	if entry.LoggerName != "" {
		record.AddAttrs(slog.String("logger", entry.LoggerName))
	}
	record.AddAttrs(c.attrs...)
	record.AddAttrs(toAttrs(fields)...)
	return c.logger.Handler().Handle(context.Background(), record)
}

func (c *core) Sync() error { return nil }

func toSlogLevel(level zapcore.Level) slog.Level {
	switch {
	case level <= zapcore.DebugLevel:
		return slog.LevelDebug
	case level == zapcore.InfoLevel:
		return slog.LevelInfo
	case level == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// toAttrs converts zap fields through zap's own map encoder, which knows every field type; each field
// is encoded on its own to keep the order the caller gave.
func toAttrs(fields []zapcore.Field) []slog.Attr {
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		keys := make([]string, 0, len(enc.Fields))
		for k := range enc.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			attrs = append(attrs, slog.Any(k, enc.Fields[k]))
		}
	}
	return attrs
}
