package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apictl/apictl/pkg/certs"
	"github.com/apictl/apictl/pkg/flags"
	"github.com/apictl/apictl/pkg/output"
)

func newCertsCmd(streams Streams) *cobra.Command {
	cmd := groupCmd("certs", "Bootstrap, inspect and renew the server's PKI",
		newCertsInitCmd(streams),
		newCertsListCmd(streams),
		newCertsRenewCmd(streams),
		newCertsClientCmd(streams),
		newCertsRequestCmd(streams),
		newCertsFetchCmd(streams),
		newCertsInspectCmd(streams),
	)
	cmd.Long = "Create and look after the certificates apictl serve uses: a CA, the serving pair, an admin client\n" +
		"certificate with its kubeconfig, the front proxy's CA and client pair and, with --etcd, an etcd CA with\n" +
		"its pairs. They live in --cert-dir (default <data-dir>/pki, the directory apictl serve uses). Keys are\n" +
		"0600, certificates 0644, and every file is written atomically; a run that fails leaves the directory as\n" +
		"it was.\n\n" +
		"--data-dir, --cert-dir, --advertise-address and --secure-port mean what they mean for apictl serve and\n" +
		"are read from APICTL_DATA_DIR, APICTL_CERT_DIR, APICTL_ADVERTISE_ADDRESS and APICTL_SECURE_PORT when\n" +
		"not given."
	return cmd
}

// certDirFlags are --data-dir and --cert-dir, with serve's names, defaults and meaning.
type certDirFlags struct {
	dataDir, certDir string
}

func (d *certDirFlags) addFlags(cmd *cobra.Command) {
	d.dataDir = flags.DefaultDataDir
	cmd.Flags().StringVar(&d.dataDir, "data-dir", d.dataDir, "The data directory of apictl serve; the cert dir defaults to <data-dir>/"+certs.DirName+".")
	cmd.Flags().StringVar(&d.certDir, "cert-dir", d.certDir, "The directory of the certificates. If blank, <data-dir>/"+certs.DirName+".")
	_ = cmd.MarkFlagDirname("data-dir")
	_ = cmd.MarkFlagDirname("cert-dir")
}

// dir returns the cert dir the flags name.
func (d *certDirFlags) dir() string {
	if d.certDir != "" {
		return d.certDir
	}
	return filepath.Join(d.dataDir, certs.DirName)
}

// serveEnvFlags are the flags certs and snapshot share with serve, which it reads from serve's environment
// variables too, so that `APICTL_DATA_DIR=/var/lib/apictl apictl certs list` looks where serve does.
var serveEnvFlags = []string{"data-dir", "cert-dir", "advertise-address", "secure-port", "etcd-servers", "etcd-cafile", "etcd-certfile", "etcd-keyfile"}

// applyServeEnv sets the shared flags the command line left unset from APICTL_* variables.
func applyServeEnv(cmd *cobra.Command) error {
	for _, name := range serveEnvFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || f.Changed {
			continue
		}
		value := os.Getenv(flags.EnvName(name))
		if value == "" {
			continue
		}
		if err := f.Value.Set(value); err != nil {
			return fmt.Errorf("environment variable %s=%q is invalid for --%s: %w", flags.EnvName(name), value, name, err)
		}
	}
	return nil
}

// durationValue is a flag holding a period in the units certificates are thought of in: 1y, 30d,
// or any Go duration. Its default prints the same way.
type durationValue struct{ d *time.Duration }

var _ pflag.Value = durationValue{}

func (v durationValue) String() string { return certs.FormatDuration(*v.d) }
func (v durationValue) Type() string   { return "duration" }
func (v durationValue) Set(s string) error {
	d, err := certs.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func durationFlag(cmd *cobra.Command, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	cmd.Flags().Var(durationValue{p}, name, usage)
}

// addKeyAlgorithmFlag registers --key-algorithm with completion.
func addKeyAlgorithmFlag(cmd *cobra.Command, p *string, usage string) {
	cmd.Flags().StringVar(p, "key-algorithm", *p, usage+" One of: "+strings.Join(certs.KeyAlgorithmNames(), ", ")+".")
	_ = cmd.RegisterFlagCompletionFunc("key-algorithm", cobra.FixedCompletions(certs.KeyAlgorithmNames(), cobra.ShellCompDirectiveNoFileComp))
}

// addEndpointFlags registers --advertise-address and --secure-port, which make a kubeconfig's server URL.
func addEndpointFlags(cmd *cobra.Command, advertise *string, port *int) {
	*port = certs.DefaultSecurePort
	cmd.Flags().StringVar(advertise, "advertise-address", *advertise,
		"The IP address apictl serve advertises to clients: a SAN of the serving certificate and the host of the kubeconfig's server URL (127.0.0.1 if blank).")
	cmd.Flags().IntVar(port, "secure-port", *port, "The port of apictl serve, for the kubeconfig's server URL.")
}

// exactArgs wants n arguments, described by what, and calls anything else a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%q takes %s, got %d argument(s)", cmd.CommandPath(), what, len(args))}
		}
		return nil
	}
}

// writeReport prints a run's summary and its notes: after the table on a terminal, on stderr in a
// pipe so that stdout stays one record per line, and inside the document for JSON and YAML.
func writeReport(streams Streams, r *certs.Report, f output.Format) error {
	if err := certs.WriteReport(streams.Out, r, f, streams.OutIsTerminal); err != nil {
		return err
	}
	if f != output.FormatTable {
		return nil
	}
	notes := streams.ErrOut
	if streams.OutIsTerminal {
		notes = streams.Out
	}
	return certs.WriteNotes(notes, r.Notes)
}
