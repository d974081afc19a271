package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsInspectOptions are the flags of `apictl certs inspect`.
type certsInspectOptions struct {
	target  string
	timeout time.Duration
	caFile  string
	format  string
}

func newCertsInspectCmd(streams Streams) *cobra.Command {
	o := &certsInspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect FILE|URL [--ca-file FILE] [-o text|json|yaml]",
		Short: "Print a certificate from a PEM file or a TLS endpoint: subject, SANs, usages, validity, fingerprints",
		Long: "Print the first certificate of a PEM file, or of the chain a TLS server presents (https://127.0.0.1:6443):\n" +
			"subject, issuer, SANs, usages, validity, key algorithm and SHA-256 and SHA-1 fingerprints, and how many\n" +
			"certificates the chain holds. An endpoint's chain is read without trusting it; with --ca-file the chain\n" +
			"(and the endpoint's host name) is verified against that CA, and the exit status is 1 when it fails.",
		Args: exactArgs(1, "one argument, a PEM file or an https:// URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.target = args[0]
			return runCertsInspect(cmd.Context(), streams, o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", certs.DefaultInspectTimeout, "How long to wait for an endpoint's TLS handshake.")
	cmd.Flags().StringVar(&o.caFile, "ca-file", "", "A PEM file of CA certificates to verify the chain against.")
	_ = cmd.MarkFlagFilename("ca-file", "crt", "pem")
	addOutputFlag(cmd, &o.format, formatNames(certs.InspectionFormats)...)
	return cmd
}

func runCertsInspect(ctx context.Context, streams Streams, o *certsInspectOptions) error {
	f, err := parseFormat(o.format, certs.InspectionFormats)
	if err != nil {
		return err
	}
	in, err := certs.Inspect(ctx, o.target, certs.InspectOptions{Timeout: o.timeout, CAFile: o.caFile})
	if err != nil {
		return err
	}
	if err := certs.WriteInspection(streams.Out, in, f); err != nil {
		return err
	}
	if in.Verified != nil && !*in.Verified {
		return exitError{ExitFailure}
	}
	return nil
}
