package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/apiserver"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/serve"
)

// serveRun is what `apictl serve` hands its run function: checked options and where to report.
type serveRun struct {
	options *flags.ServerOptions
	streams Streams
}

// newServeCmd builds `apictl serve`. runF replaces the run function in tests that only need the
// parsed options.
func newServeCmd(streams Streams, runF func(context.Context, *serveRun) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server",
		Long: "Run the API server: TLS with client-certificate and token authentication on --secure-port, plain HTTP\n" +
			"without authentication on the loopback --insecure-port, objects stored in etcd (embedded unless\n" +
			"--etcd-servers is given). Every flag can also be set as APICTL_<FLAG> in the environment or as a key\n" +
			"in the --config file; flags win over the environment, which wins over the file.",
		Args: noArgs,
	}
	sf := bindServerFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e := sf.evaluate(cmd)
		if err := flags.WriteProblems(streams.ErrOut, e); err != nil {
			return err
		}
		if !e.Valid() {
			return exitError{ExitFailure}
		}
		run := &serveRun{options: sf.options, streams: streams}
		if runF != nil {
			return runF(cmd.Context(), run)
		}
		return runServe(cmd.Context(), run)
	}
	return cmd
}

// runServe builds the server from checked options and runs it until SIGTERM or SIGINT; a second
// signal exits at once.
func runServe(ctx context.Context, run *serveRun) error {
	// The server's logger exists once the server does; a second signal before that is said plainly.
	var logger atomic.Pointer[slog.Logger]
	ctx, stop := serve.SignalContext(ctx, func(sig os.Signal) {
		const msg = "a second signal: exiting at once, without finishing the graceful shutdown"
		if l := logger.Load(); l != nil {
			l.Error(msg, "signal", sig.String())
		} else {
			fmt.Fprintf(run.streams.ErrOut, "apictl serve: %s (%s)\n", msg, sig)
		}
		os.Exit(ExitFailure)
	})
	defer stop()
	if run.options.Etcd.Cluster.ClusterReset {
		return apiserver.ResetCluster(ctx, run.options, run.streams.ErrOut)
	}
	s, err := apiserver.New(ctx, run.options, run.streams.ErrOut, apiserver.Extras{})
	if err != nil {
		return err
	}
	// The process is the server's alone here (tests run several in one), so the collector's soft
	// limit is set to the budget, unless the user set GOMEMLIMIT.
	if budget := run.options.Generic.MemoryBudgetBytes; budget > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(budget)
	}
	logger.Store(s.Logger())
	routeKlog(s.Logger())
	if err := s.Run(ctx); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
