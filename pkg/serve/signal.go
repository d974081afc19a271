package serve

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a context that ends at the first SIGTERM or SIGINT, starting a graceful
// shutdown. A second signal calls second, which is expected to exit at once, for an operator who does
// not want to wait. stop releases the signal handlers.
func SignalContext(parent context.Context, second func(os.Signal)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			second(sig)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// Logger is the server's logger, for what happens around it (a second signal) to be logged alike.
func (p *PreparedServer) Logger() *slog.Logger { return p.cfg.Logger }
