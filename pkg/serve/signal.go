package serve

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a context that ends at the first SIGTERM or SIGINT, starting a graceful
// shutdown. A second signal calls exit(1) at once, for an operator who does not want to wait. stop
// releases the signal handlers.
func SignalContext(parent context.Context, exit func(code int)) (ctx context.Context, stop func()) {
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
		case <-ch:
			exit(1)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
