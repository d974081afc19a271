package app

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsRenewOptions are the flags of `apictl certs renew`.
type certsRenewOptions struct {
	dirs             certDirFlags
	names            []string
	all              bool
	yes              bool
	newKey           bool
	keyAlgorithm     string
	validity         time.Duration
	caValidity       time.Duration
	hosts            []string
	etcdHosts        []string
	advertiseAddress string
	format           string
}

func newCertsRenewCmd(streams Streams) *cobra.Command {
	o := &certsRenewOptions{}
	cmd := &cobra.Command{
		Use:   "renew NAME... | --all",
		Short: "Re-sign certificates with their CA, keeping every SAN; say what running programs must do",
		Long: "Re-sign the named certificates (apiserver, admin, front-proxy-client, etcd/server, etcd/peer,\n" +
			"apiserver-etcd-client, a client's name), or with --all every leaf whose CA key is in the cert dir, with a\n" +
			"new validity period. A renewed certificate keeps its subject and every SAN it had, plus what --hosts,\n" +
			"--etcd-hosts and --advertise-address add to the serving and etcd certificates; it keeps its key unless\n" +
			"--new-key. Kubeconfigs in the cert dir that embed a renewed certificate are rewritten. A CA is renewed only\n" +
			"when named with --yes (apictl certs renew ca --yes): it keeps its key and subject, so the certificates it\n" +
			"signed stay valid. apictl certs renew sa replaces the service-account key pair (sa.key, sa.pub) with a new\n" +
			"one: tokens signed by the old key stop verifying unless the old public key stays in a\n" +
			"--service-account-key-file, and apictl serve must restart.\n" +
			"The output ends with what other programs must do; a running apictl serve needs nothing.",
		Args: cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			_ = applyServeEnv(cmd)
			return certNames(o.dirs.dir()), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			o.names = args
			return runCertsRenew(cmd.Context(), streams, o)
		},
	}
	o.dirs.addFlags(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&o.all, "all", false, "Renew every leaf certificate whose CA key is in the cert dir (not the CAs).")
	fs.BoolVar(&o.yes, "yes", false, "Confirm renewing a CA named on the command line.")
	fs.BoolVar(&o.newKey, "new-key", false, "Give renewed leaf certificates new keys.")
	addKeyAlgorithmFlag(cmd, &o.keyAlgorithm, "Algorithm of new keys with --new-key. If blank, the old key's.")
	durationFlag(cmd, &o.validity, "validity", certs.DefaultValidity, "How long renewed leaf certificates are valid.")
	durationFlag(cmd, &o.caValidity, "ca-validity", certs.DefaultCAValidity, "How long a renewed CA is valid.")
	fs.StringSliceVar(&o.hosts, "hosts", nil, "SANs to add to the serving certificate, comma separated.")
	fs.StringSliceVar(&o.etcdHosts, "etcd-hosts", nil, "SANs to add to the etcd server and peer certificates, comma separated.")
	fs.StringVar(&o.advertiseAddress, "advertise-address", "", "The IP address apictl serve advertises, added to the serving and etcd certificates.")
	addOutputFlag(cmd, &o.format, formatNames(certs.ReportFormats)...)
	return cmd
}

func runCertsRenew(ctx context.Context, streams Streams, o *certsRenewOptions) error {
	f, err := parseFormat(o.format, certs.ReportFormats)
	if err != nil {
		return err
	}
	switch {
	case o.all && len(o.names) > 0:
		return usageError{errors.New("give certificate names or --all, not both")}
	case !o.all && len(o.names) == 0:
		return usageError{errors.New("name the certificates to renew (see apictl certs list), or give --all")}
	}
	spec := certs.NewRenewSpec(o.dirs.dir())
	spec.Names, spec.All, spec.ConfirmCA = o.names, o.all, o.yes
	spec.NewKey, spec.KeyAlgorithm = o.newKey, certs.KeyAlgorithm(o.keyAlgorithm)
	spec.Validity, spec.CAValidity = o.validity, o.caValidity
	spec.Hosts, spec.EtcdHosts, spec.AdvertiseAddress = o.hosts, o.etcdHosts, o.advertiseAddress
	report, err := certs.Renew(ctx, spec)
	if err != nil {
		return err
	}
	return writeReport(streams, report, f)
}

// certNames lists the certificates of a cert dir for completion; nothing when it cannot be read.
func certNames(dir string) []string {
	l, err := certs.List(certs.ListOptions{Dir: dir, Now: time.Now()})
	if err != nil {
		return nil
	}
	var names []string
	for _, c := range l.Certificates {
		if c.KeyPath != "" || c.IsCA {
			names = append(names, c.Name)
		}
	}
	for _, k := range l.Keys {
		names = append(names, k.Name)
	}
	return names
}
