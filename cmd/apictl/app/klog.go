package app

import (
	"context"
	"log/slog"

	"k8s.io/klog/v2"
)

// routeKlog sends what kube's libraries log through klog (the admission plugins, client-go's
// informers) to the server's logger, in its format. Their Info lines are about their own machinery, so
// they show from -v 4 on, as Debug; warnings and errors keep their level. klog is process-wide, as it
// is in kube-apiserver, so the command sets it, once, and no package does.
func routeKlog(logger *slog.Logger) {
	klog.SetSlogLogger(slog.New(demoted{logger.Handler()}).With("component", "k8s.io"))
}

// demoted lowers records below Warn by four levels: Info becomes Debug.
type demoted struct{ slog.Handler }

func demote(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return l - 4
	}
	return l
}

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, demote(l))
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.Handler.Handle(ctx, r)
}

func (d demoted) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoted{d.Handler.WithAttrs(attrs)}
}

func (d demoted) WithGroup(name string) slog.Handler { return demoted{d.Handler.WithGroup(name)} }
