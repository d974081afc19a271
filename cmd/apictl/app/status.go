package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/output"
	"github.com/apictl/apictl/pkg/snapshot"
	"github.com/apictl/apictl/pkg/status"
)

// statusTimeout bounds one report: the server gathers within five seconds, whatever answers late.
const statusTimeout = 10 * time.Second

// statusOptions are the flags of `apictl status`.
type statusOptions struct {
	kubeconfig string
	dirs       certDirFlags
	format     string
	watch      bool
	interval   time.Duration
	// now is when the report is judged; tests pin it.
	now func() time.Time
}

func newStatusCmd(streams Streams, runF func(context.Context, Streams, *statusOptions) error) *cobra.Command {
	o := &statusOptions{now: time.Now}
	if runF == nil {
		runF = runStatus
	}
	cmd := &cobra.Command{
		Use:   "status [--kubeconfig FILE | --data-dir DIR] [-o table|json|yaml] [--watch]",
		Short: "Show the control plane at a glance: server, etcd, snapshots, certificates, controllers, API and load",
		Long: "Show the whole control plane, with what is wrong first: the server's version, uptime and failing readyz\n" +
			"checks; each etcd member's role, peer URL, database size against the quota, raft lag and alarms; the last\n" +
			"scheduled snapshot and the next; every certificate's expiry; who holds the controllers' Lease; the ten\n" +
			"largest resources by stored bytes; requests in flight, APF queues and watches.\n\n" +
			"--kubeconfig asks a server's /apictl/v1/status, which needs the ClusterRole system:apictl:status-reader\n" +
			"(cluster-admin has it). Otherwise the server of --data-dir is asked with the admin kubeconfig of its cert\n" +
			"dir; when it does not answer, what the data dir holds (certificates, snapshots) is still shown.\n\n" +
			"Warnings: a certificate expiring within 30 days, no scheduled snapshot in twice its schedule, an etcd\n" +
			"database over 80% of its quota, a learner not promoted after 5 minutes, an etcd member that does not answer.\n" +
			"Problems: a failed readyz check, a server that does not answer, an etcd alarm, no etcd leader, an expired\n" +
			"certificate. Exit status: 0 healthy, 1 warnings, 2 problems (or a usage error), for cron jobs and monitors.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.kubeconfig != "" && (cmd.Flags().Changed("data-dir") || cmd.Flags().Changed("cert-dir")) {
				return usageError{errors.New("--kubeconfig and --data-dir (or --cert-dir) name two servers: give one")}
			}
			if o.interval <= 0 {
				return usageError{fmt.Errorf("--interval %s must be greater than zero, like 5s", o.interval)}
			}
			return runF(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "Ask the server of this kubeconfig (its current context) instead of the one of --data-dir")
	_ = cmd.MarkFlagFilename("kubeconfig")
	o.dirs.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "Refresh the report every --interval until interrupted")
	durationFlag(cmd, &o.interval, "interval", 5*time.Second, "How often --watch refreshes the report.")
	addOutputFlag(cmd, &o.format, formatNames(status.Formats)...)
	return cmd
}

func runStatus(ctx context.Context, streams Streams, o *statusOptions) error {
	f, err := parseFormat(o.format, status.Formats)
	if err != nil {
		return err
	}
	if !o.watch {
		r := o.report(ctx)
		if err := status.Write(streams.Out, r, f, streams.OutIsTerminal, o.now()); err != nil {
			return err
		}
		return statusExit(r)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	for {
		r := o.report(ctx)
		if ctx.Err() != nil {
			return statusExit(r)
		}
		if f == output.FormatTable && streams.OutIsTerminal {
			// Clear the screen and go home, as watch(1) does, so the report stays in place.
			if _, err := io.WriteString(streams.Out, "\x1b[H\x1b[2J"); err != nil {
				return err
			}
		}
		if err := status.Write(streams.Out, r, f, streams.OutIsTerminal, o.now()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return statusExit(r)
		case <-time.After(o.interval):
		}
	}
}

func statusExit(r *status.Report) error {
	if r.Exit == status.ExitHealthy {
		return nil
	}
	return exitError{r.Exit}
}

// report asks the server and, when it does not answer and a data dir was named, reads the data dir.
func (o *statusOptions) report(ctx context.Context) *status.Report {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	now := o.now()
	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		kubeconfig = filepath.Join(o.dirs.dir(), certs.AdminKubeconfigName)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err == nil {
		cfg.UserAgent = "apictl-status"
		var r *status.Report
		if r, err = status.Fetch(ctx, cfg); err == nil {
			status.Judge(r, now)
			r.Server.URL = cfg.Host
			return r
		}
	} else {
		err = fmt.Errorf("reading the kubeconfig %s: %w", kubeconfig, err)
		cfg = &rest.Config{}
	}
	local := status.LocalOptions{ServerURL: cfg.Host, ServerError: err.Error()}
	if o.kubeconfig == "" {
		local.CertDir = o.dirs.dir()
		local.Snapshots = localSnapshots(o.dirs.dataDir)
	}
	return status.Local(local, now)
}

// localSnapshots are serve's default schedule and dir: without the server, its flags are unknown.
func localSnapshots(dataDir string) status.SnapshotSource {
	spec := flags.NewEtcdOptions().SnapshotScheduleCron
	sched, _ := snapshot.ParseSchedule(spec) // the default parses
	return status.SnapshotSource{Spec: spec, Schedule: sched, Dir: filepath.Join(dataDir, "snapshots")}
}
