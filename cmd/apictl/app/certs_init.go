package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsInitOptions are the flags of `apictl certs init`.
type certsInitOptions struct {
	dirs             certDirFlags
	hosts            []string
	etcdHosts        []string
	advertiseAddress string
	securePort       int
	keyAlgorithm     string
	validity         time.Duration
	caValidity       time.Duration
	etcd             bool
	force            bool
	forceCA          bool
	format           string
}

func newCertsInitCmd(streams Streams) *cobra.Command {
	o := &certsInitOptions{}
	cmd := &cobra.Command{
		Use:   "init [--cert-dir DIR] [--hosts H1,H2] [--etcd] [flags]",
		Short: "Create the CA, serving, admin, front-proxy (and etcd) certificates and admin.kubeconfig; keep what is valid",
		Long: "Create in --cert-dir what apictl serve needs: ca.crt/.key (a CA, valid --ca-validity), apiserver.crt/.key\n" +
			"(serving: server auth, SANs localhost, 127.0.0.1, ::1, the host name, kubernetes, kubernetes.default,\n" +
			"kubernetes.default.svc, kubernetes.default.svc.cluster.local, --advertise-address and every --hosts entry),\n" +
			"admin.crt/.key (client auth, CN apictl-admin, O system:masters), admin.kubeconfig, and, as kubeadm does,\n" +
			"front-proxy-ca.crt/.key (the front proxy's own CA, for --requestheader-client-ca-file) with\n" +
			"front-proxy-client.crt/.key (client auth, CN front-proxy-client). With --etcd also etcd/ca, etcd/server\n" +
			"and etcd/peer (server and client auth, SANs localhost, 127.0.0.1, ::1, the host name, --advertise-address\n" +
			"and --etcd-hosts) and apiserver-etcd-client (client auth).\n\n" +
			"Running it again is safe: what exists and is valid is kept. A leaf that expired, lacks a requested SAN or\n" +
			"usage, or was signed by another CA is re-issued with its key and its old SANs; --force re-issues every\n" +
			"leaf with a new key. A CA is only replaced with --force-ca. A ca.crt without ca.key is an external CA:\n" +
			"its leaves are checked, not signed. apictl serve runs this same code when it starts without --tls-cert-file.\n" +
			"A summary ends every run: each file, what was done (created, kept, re-issued, updated) and when it expires.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			return runCertsInit(cmd.Context(), streams, o)
		},
	}
	o.dirs.addFlags(cmd)
	fs := cmd.Flags()
	fs.StringSliceVar(&o.hosts, "hosts", nil, "Extra SANs of the serving certificate, comma separated: IP addresses and DNS names; a DNS name may start with *.")
	fs.BoolVar(&o.etcd, "etcd", false, "Also create an etcd CA with server, peer and apiserver-etcd-client certificates.")
	fs.StringSliceVar(&o.etcdHosts, "etcd-hosts", nil, "Extra SANs of the etcd server and peer certificates, comma separated.")
	addEndpointFlags(cmd, &o.advertiseAddress, &o.securePort)
	addKeyAlgorithmFlag(cmd, &o.keyAlgorithm, "Algorithm of new keys (existing keys are kept). If blank, "+string(certs.DefaultKeyAlgorithm)+".")
	durationFlag(cmd, &o.validity, "validity", certs.DefaultValidity, "How long new leaf certificates are valid: a number of days or years (30d, 2y) or a Go duration (8760h).")
	durationFlag(cmd, &o.caValidity, "ca-validity", certs.DefaultCAValidity, "How long a new CA is valid.")
	fs.BoolVar(&o.force, "force", false, "Re-issue every leaf certificate with a new key and exactly the requested SANs, even if it is valid.")
	fs.BoolVar(&o.forceCA, "force-ca", false, "Replace the CAs with new ones (new keys), which re-issues every certificate.")
	addOutputFlag(cmd, &o.format, formatNames(certs.ReportFormats)...)
	return cmd
}

func runCertsInit(ctx context.Context, streams Streams, o *certsInitOptions) error {
	f, err := parseFormat(o.format, certs.ReportFormats)
	if err != nil {
		return err
	}
	spec := certs.NewServingSpec(o.dirs.dir())
	spec.Hosts, spec.EtcdHosts, spec.Etcd = o.hosts, o.etcdHosts, o.etcd
	spec.AdvertiseAddress, spec.SecurePort = o.advertiseAddress, o.securePort
	spec.KeyAlgorithm = certs.KeyAlgorithm(o.keyAlgorithm)
	spec.Validity, spec.CAValidity = o.validity, o.caValidity
	spec.Force, spec.ForceCA = o.force, o.forceCA
	report, err := certs.EnsureServing(ctx, spec)
	if err != nil {
		return err
	}
	return writeReport(streams, report, f)
}
