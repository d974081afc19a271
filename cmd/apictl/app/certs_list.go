package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsListOptions are the flags of `apictl certs list`.
type certsListOptions struct {
	dirs       certDirFlags
	warnWithin time.Duration
	format     string
	// now is when validity is judged; tests pin it.
	now func() time.Time
}

func newCertsListCmd(streams Streams) *cobra.Command {
	o := &certsListOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:     "list [--cert-dir DIR] [--warn-within 30d] [-o table|wide|json|yaml]",
		Aliases: []string{"check-expiration"},
		Short:   "List every certificate in the cert dir with its expiry and status; exit 1 unless all are ok",
		Long: "List every certificate in the cert dir (*.crt, and the client certificates kubeconfigs embed): subject,\n" +
			"expiry, residual time, the CA that signed it, and a status: ok; expiring (within --warn-within); expired;\n" +
			"not yet valid; bad chain (no CA in the cert dir signed it, or its CA is not valid); key mismatch (the\n" +
			"key beside it belongs to another certificate); wrong usage (such as a serving certificate without\n" +
			"server auth). Why a certificate is not ok is printed on stderr. -o wide adds SANs, usages and key\n" +
			"algorithm; -o json and -o yaml give notAfter (RFC 3339), residual seconds and everything else.\n" +
			"Exit status: 0 when every certificate is ok, 1 otherwise, 2 for a usage error; fit for cron and CI.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			return runCertsList(cmd.Context(), streams, o)
		},
	}
	o.dirs.addFlags(cmd)
	durationFlag(cmd, &o.warnWithin, "warn-within", certs.DefaultWarnWithin, "Report a certificate as expiring when it has this little time left.")
	addOutputFlag(cmd, &o.format, formatNames(certs.ListFormats)...)
	return cmd
}

func runCertsList(_ context.Context, streams Streams, o *certsListOptions) error {
	f, err := parseFormat(o.format, certs.ListFormats)
	if err != nil {
		return err
	}
	l, err := certs.List(certs.ListOptions{Dir: o.dirs.dir(), Now: o.now(), WarnWithin: o.warnWithin})
	if err != nil {
		return err
	}
	if err := certs.WriteListing(streams.Out, l, f, streams.OutIsTerminal); err != nil {
		return err
	}
	if l.OK() {
		return nil
	}
	if err := certs.WriteListingProblems(streams.ErrOut, l); err != nil {
		return err
	}
	return exitError{ExitFailure}
}
