package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/snapshot"
	"github.com/apictl/apictl/pkg/storage/embedded"
	"github.com/apictl/apictl/pkg/version"
)

// snapshotDirFlags are the flags every snapshot command takes to find the snapshots.
type snapshotDirFlags struct {
	dataDir string
	dir     string
}

func (d *snapshotDirFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.dataDir, "data-dir", flags.DefaultDataDir, "The data directory of apictl serve (its embedded etcd is in <data-dir>/etcd)")
	cmd.Flags().StringVar(&d.dir, "dir", "", "The snapshot directory (default <data-dir>/snapshots)")
}

func (d *snapshotDirFlags) snapshots() string {
	if d.dir != "" {
		return d.dir
	}
	return filepath.Join(d.dataDir, "snapshots")
}

func newSnapshotCmd(streams Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save, list, prune and restore snapshots of the etcd apictl serve stores in",
		Long: "Snapshots of the etcd apictl serve stores in: its embedded etcd (found through --data-dir, running or\n" +
			"not) or an external cluster (--etcd-servers and the --etcd-* files serve takes). A snapshot is a file in\n" +
			"<data-dir>/snapshots (or --dir) with NAME.json beside it recording its revision, size, SHA-256 and the\n" +
			"versions that made it.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSnapshotSaveCmd(streams), newSnapshotListCmd(streams), newSnapshotDeleteCmd(streams),
		newSnapshotPruneCmd(streams), newSnapshotRestoreCmd(streams))
	return cmd
}

func newSnapshotSaveCmd(streams Streams) *cobra.Command {
	var d snapshotDirFlags
	var src snapshot.Source
	var name string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "save [--name NAME] [--data-dir DIR | --etcd-servers URLS] [--dir DIR]",
		Short: "Take a consistent snapshot of the etcd apictl serve uses",
		Long: "Take a consistent snapshot of one etcd member through etcd's maintenance API, write it atomically into\n" +
			"the snapshot directory, check it, and record its revision, size and SHA-256 beside it. The embedded etcd\n" +
			"is reached through the URL and credentials a running apictl serve keeps in --data-dir; when none runs,\n" +
			"the snapshot is taken from the data dir directly.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			if timeout <= 0 {
				return usageError{fmt.Errorf("--timeout %s: must be positive", timeout)}
			}
			if name == "" {
				name = "on-demand-" + hostname() + "-" + time.Now().UTC().Format("20060102T150405Z")
			}
			if err := snapshot.CheckName(name); err != nil {
				return usageError{err}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			src.DataDir = d.dataDir
			cl, closeClient, err := snapshot.Connect(ctx, src)
			if err != nil {
				return err
			}
			v := version.Get()
			info, err := snapshot.Save(ctx, cl.Maintenance, snapshot.SaveOptions{Dir: d.snapshots(), Name: name, Endpoint: cl.Endpoints()[0],
				ApictlVersion: v.Apictl(), KubernetesVersion: v.Kubernetes()})
			if cerr := closeClient(cmd.Context()); err == nil && cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "Snapshot %s saved to %s: %s\n", info.Name, filepath.Join(d.snapshots(), info.Name), snapshot.Describe(info))
			return err
		},
	}
	d.addFlags(cmd)
	cmd.Flags().StringVar(&name, "name", "", "The snapshot's file name (default on-demand-<host>-<UTC time>)")
	cmd.Flags().StringSliceVar(&src.Endpoints, "etcd-servers", nil, "Client URLs of an external etcd cluster, as apictl serve takes them; one member answering is snapshotted")
	cmd.Flags().StringVar(&src.CAFile, "etcd-cafile", "", "CA file to verify the external etcd with")
	cmd.Flags().StringVar(&src.CertFile, "etcd-certfile", "", "Client certificate for the external etcd")
	cmd.Flags().StringVar(&src.KeyFile, "etcd-keyfile", "", "Key of the client certificate for the external etcd")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "How long the whole snapshot may take")
	return cmd
}

func newSnapshotListCmd(streams Streams) *cobra.Command {
	var d snapshotDirFlags
	var format string
	cmd := &cobra.Command{
		Use:     "ls [--data-dir DIR | --dir DIR] [-o table|json]",
		Aliases: []string{"list"},
		Short:   "List the snapshots, oldest first",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			f, err := parseFormat(format, snapshot.ListFormats)
			if err != nil {
				return err
			}
			snaps, err := snapshot.List(d.snapshots())
			if err != nil {
				return err
			}
			return snapshot.WriteList(streams.Out, snaps, f, streams.OutIsTerminal)
		},
	}
	d.addFlags(cmd)
	addOutputFlag(cmd, &format, formatNames(snapshot.ListFormats)...)
	return cmd
}

func newSnapshotDeleteCmd(streams Streams) *cobra.Command {
	var d snapshotDirFlags
	cmd := &cobra.Command{
		Use:   "delete NAME [NAME...]",
		Short: "Delete snapshots and their records",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			for _, n := range names {
				if err := snapshot.Delete(d.snapshots(), n); err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "Snapshot %s deleted\n", n)
			}
			return nil
		},
	}
	d.addFlags(cmd)
	return cmd
}

func newSnapshotPruneCmd(streams Streams) *cobra.Command {
	var d snapshotDirFlags
	var retention int
	var prefix string
	cmd := &cobra.Command{
		Use:   "prune [--retention N] [--name-prefix PREFIX]",
		Short: "Delete the oldest snapshots whose names start with --name-prefix, keeping --retention of them",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			if retention < 1 {
				return usageError{fmt.Errorf("--retention %d: keep at least 1 snapshot", retention)}
			}
			deleted, err := snapshot.Prune(d.snapshots(), prefix, retention)
			for _, s := range deleted {
				fmt.Fprintf(streams.Out, "Snapshot %s deleted\n", s.Name)
			}
			return err
		},
	}
	d.addFlags(cmd)
	cmd.Flags().IntVar(&retention, "retention", 5, "How many snapshots to keep")
	cmd.Flags().StringVar(&prefix, "name-prefix", "on-demand-", "Only snapshots whose names start with this are pruned")
	return cmd
}

func newSnapshotRestoreCmd(streams Streams) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "restore FILE [--data-dir DIR]",
		Short: "Make a snapshot the embedded etcd's data (apictl serve stopped); the old data is moved aside",
		Long: "Verify the snapshot (its size, the SHA-256 etcd appended, the SHA-256 recorded beside it, bbolt's own\n" +
			"check), restore it into a new etcd member beside <data-dir>/etcd, then move the old data to\n" +
			"<data-dir>/etcd-old-<UTC time> (never deleted) and put the restored member in its place. The revision\n" +
			"is moved past the snapshot's and marked compacted, so clients that saw newer resourceVersions get 410\n" +
			"Gone and relist. A corrupt, truncated or foreign file is refused and the data dir is left as it was.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			res, err := snapshot.Restore(cmd.Context(), snapshot.RestoreOptions{File: args[0], DataDir: dataDir})
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Restored %s into %s: %s\n", args[0], res.EtcdDir, snapshot.Describe(res.Snapshot))
			if res.MovedTo != "" {
				fmt.Fprintf(&b, "The etcd data that was there is in %s; delete it once the restored server is checked.\n", res.MovedTo)
			}
			fmt.Fprintf(&b, "Next: apictl serve --data-dir %s\n", dataDir)
			if res.MovedTo != "" && embedded.IsClusterMember(res.MovedTo) {
				fmt.Fprintf(&b, "The old data was a member of an embedded etcd cluster: start this server with --cluster-init, then on every other member move <data-dir>/etcd aside and start it with --join and the join token.\n")
			}
			_, err = streams.Out.Write([]byte(b.String()))
			return err
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", flags.DefaultDataDir, "The data directory of apictl serve to restore into")
	return cmd
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "apictl"
	}
	return h
}
