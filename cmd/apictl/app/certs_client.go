package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsClientOptions are the flags of `apictl certs client`.
type certsClientOptions struct {
	dirs             certDirFlags
	name             string
	groups           []string
	kubeconfigOut    string
	server           string
	advertiseAddress string
	securePort       int
	keyAlgorithm     string
	validity         time.Duration
	force            bool
	format           string
}

func newCertsClientCmd(streams Streams) *cobra.Command {
	o := &certsClientOptions{}
	cmd := &cobra.Command{
		Use:   "client NAME [--groups g1,g2] [--kubeconfig-out FILE] [--server URL]",
		Short: "Create a client certificate for a user, signed by the cert dir's CA, and a kubeconfig for it",
		Long: "Create <cert-dir>/NAME.crt and NAME.key (client auth, CN NAME, one O per --groups entry), signed by the\n" +
			"cert dir's CA, and a kubeconfig with the CA, certificate and key embedded: --kubeconfig-out, or\n" +
			"<cert-dir>/NAME.kubeconfig. Its server is --server, or https://<advertise-address or 127.0.0.1>:<secure-port>.\n" +
			"Running it again keeps a certificate that still fits and re-issues one whose groups changed.",
		Args: exactArgs(1, "one argument, the user's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			o.name = args[0]
			return runCertsClient(cmd.Context(), streams, o)
		},
	}
	o.dirs.addFlags(cmd)
	fs := cmd.Flags()
	fs.StringSliceVar(&o.groups, "groups", nil, "The user's groups, comma separated (the certificate's organizations).")
	fs.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "Where to write the kubeconfig. If blank, <cert-dir>/NAME.kubeconfig.")
	fs.StringVar(&o.server, "server", "", "The kubeconfig's server URL. If blank, from --advertise-address and --secure-port.")
	_ = cmd.MarkFlagFilename("kubeconfig-out")
	addEndpointFlags(cmd, &o.advertiseAddress, &o.securePort)
	addKeyAlgorithmFlag(cmd, &o.keyAlgorithm, "Algorithm of a new key. If blank, "+string(certs.DefaultKeyAlgorithm)+".")
	durationFlag(cmd, &o.validity, "validity", certs.DefaultValidity, "How long the certificate is valid.")
	fs.BoolVar(&o.force, "force", false, "Re-issue the certificate with a new key even if it is valid.")
	addOutputFlag(cmd, &o.format, formatNames(certs.ReportFormats)...)
	return cmd
}

func runCertsClient(ctx context.Context, streams Streams, o *certsClientOptions) error {
	f, err := parseFormat(o.format, certs.ReportFormats)
	if err != nil {
		return err
	}
	spec := certs.NewClientSpec(o.dirs.dir(), o.name)
	spec.Groups, spec.KubeconfigOut, spec.Server = o.groups, o.kubeconfigOut, o.server
	spec.AdvertiseAddress, spec.SecurePort = o.advertiseAddress, o.securePort
	spec.KeyAlgorithm, spec.Validity, spec.Force = certs.KeyAlgorithm(o.keyAlgorithm), o.validity, o.force
	report, err := certs.IssueClient(ctx, spec)
	if err != nil {
		return err
	}
	return writeReport(streams, report, f)
}
