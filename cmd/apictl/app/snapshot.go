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
	// certDir is serve's --cert-dir, for the commands that save or restore the server's identity.
	certDir string
}

func (d *snapshotDirFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.dataDir, "data-dir", flags.DefaultDataDir, "The data directory of apictl serve (its embedded etcd is in <data-dir>/etcd)")
	cmd.Flags().StringVar(&d.dir, "dir", "", "The snapshot directory (default <data-dir>/snapshots)")
}

func (d *snapshotDirFlags) addCertDirFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&d.certDir, "cert-dir", "", usage+" (default <data-dir>/pki, as apictl serve's)")
}

func (d *snapshotDirFlags) snapshots() string {
	if d.dir != "" {
		return d.dir
	}
	return filepath.Join(d.dataDir, "snapshots")
}

func (d *snapshotDirFlags) certs() string {
	if d.certDir != "" {
		return d.certDir
	}
	return filepath.Join(d.dataDir, "pki")
}

// find is the snapshot arg names: a name as ls prints it, looked up in the snapshot directory, else
// a path.
func (d *snapshotDirFlags) find(arg string) (string, error) {
	if snapshot.CheckName(arg) == nil {
		p := filepath.Join(d.snapshots(), arg)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	return "", fmt.Errorf("no snapshot named %s in %s, nor a file %s (apictl snapshot ls --dir %s lists them)", arg, d.snapshots(), arg, d.snapshots())
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
				ApictlVersion: v.Apictl(), KubernetesVersion: v.Kubernetes(), CertDir: d.certs()})
			if cerr := closeClient(cmd.Context()); err == nil && cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			path := filepath.Join(d.snapshots(), info.Name)
			fmt.Fprintf(streams.Out, "Snapshot %s saved to %s: %s\n", info.Name, path, snapshot.Describe(info))
			if len(info.Identity) > 0 {
				_, err = fmt.Fprintf(streams.Out, "The server's CAs and service-account keys are saved with it, in %s; keep them as private as the snapshot, which holds every Secret.\n", snapshot.IdentityDir(path))
			} else {
				_, err = fmt.Fprintf(streams.Out, "No CAs or service-account keys in %s were saved with it: a restore keeps the objects, not the trust in old kubeconfigs and tokens (give --cert-dir if serve uses another).\n", d.certs())
			}
			return err
		},
	}
	d.addFlags(cmd)
	d.addCertDirFlag(cmd, "The cert dir of apictl serve, whose CAs and service-account keys are saved beside the snapshot")
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
	var d snapshotDirFlags
	cmd := &cobra.Command{
		Use:   "restore NAME|FILE [--dir DIR] [--data-dir DIR] [--cert-dir DIR]",
		Short: "Make a snapshot the embedded etcd's data (apictl serve stopped); the old data is moved aside",
		Long: "Verify the snapshot (its size, the SHA-256 etcd appended, the SHA-256 recorded beside it, bbolt's own\n" +
			"check), restore it into a new etcd member beside <data-dir>/etcd, then move the old data to\n" +
			"<data-dir>/etcd-old-<UTC time> (never deleted) and put the restored member in its place. The revision\n" +
			"is moved past the snapshot's and marked compacted, so clients that saw newer resourceVersions get 410\n" +
			"Gone and relist. The CAs and service-account keys saved with the snapshot go into --cert-dir, so that\n" +
			"the restored server trusts the saved one's kubeconfigs and tokens; a --cert-dir holding other ones is\n" +
			"refused. NAME is a snapshot as ls prints it, in --dir; anything else is a path. A corrupt, truncated or\n" +
			"foreign file is refused and the data dir is left as it was.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			file, err := d.find(args[0])
			if err != nil {
				return err
			}
			res, err := snapshot.Restore(cmd.Context(), snapshot.RestoreOptions{File: file, DataDir: d.dataDir, CertDir: d.certs()})
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Restored %s into %s: %s\n", file, res.EtcdDir, snapshot.Describe(res.Snapshot))
			if res.MovedTo != "" {
				fmt.Fprintf(&b, "The etcd data that was there is in %s; delete it once the restored server is checked.\n", res.MovedTo)
			}
			if len(res.Identity) > 0 {
				fmt.Fprintf(&b, "The saved server's CAs and service-account keys are in %s: its kubeconfigs and service-account tokens are trusted.\n", d.certs())
			} else {
				fmt.Fprintf(&b, "The snapshot carries no CAs or service-account keys: the server uses those in %s, or makes new ones, and kubeconfigs and tokens of the saved server are trusted only if they are the same.\n", d.certs())
			}
			next := "Next: apictl serve --data-dir " + d.dataDir
			if d.certDir != "" {
				next += " --cert-dir " + d.certDir
			}
			fmt.Fprintln(&b, next)
			if res.MovedTo != "" && embedded.IsClusterMember(res.MovedTo) {
				fmt.Fprintf(&b, "The old data was a member of an embedded etcd cluster: start this server with --cluster-init, then on every other member move <data-dir>/etcd aside and start it with --join and the join token.\n")
			}
			_, err = streams.Out.Write([]byte(b.String()))
			return err
		},
	}
	d.addFlags(cmd)
	d.addCertDirFlag(cmd, "The cert dir of apictl serve, where the CAs and service-account keys saved with the snapshot go")
	cmd.Flags().Lookup("data-dir").Usage = "The data directory of apictl serve to restore into"
	cmd.Flags().Lookup("dir").Usage = "The snapshot directory NAME is looked up in (default <data-dir>/snapshots)"
	return cmd
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "apictl"
	}
	return h
}
