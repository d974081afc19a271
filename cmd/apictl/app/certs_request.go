package app

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/apictl/apictl/pkg/certs"
)

// certsCSROptions are the flags of `apictl certs request` and `apictl certs fetch`.
type certsCSROptions struct {
	dirs          certDirFlags
	name          string
	groups        []string
	kubeconfig    string
	dir           string
	kubeconfigOut string
	keyAlgorithm  string
	expiration    time.Duration
	wait          time.Duration
}

// spec is the pkg/certs spec the flags describe: the submitting kubeconfig defaults to the cert
// dir's admin.kubeconfig.
func (o *certsCSROptions) spec() certs.CSRSpec {
	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		kubeconfig = filepath.Join(o.dirs.dir(), certs.NameAdmin+".kubeconfig")
	}
	return certs.CSRSpec{Name: o.name, Groups: o.groups, Kubeconfig: kubeconfig, Dir: o.dir, KubeconfigOut: o.kubeconfigOut,
		Expiration: o.expiration, KeyAlgorithm: certs.KeyAlgorithm(o.keyAlgorithm), Wait: o.wait}
}

func (o *certsCSROptions) addFlags(cmd *cobra.Command) {
	o.dirs.addFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "The kubeconfig that talks to the server. If blank, <cert-dir>/admin.kubeconfig.")
	fs.StringVar(&o.dir, "dir", ".", "The directory of the user's key (NAME.key) and kubeconfig (NAME.kubeconfig).")
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.MarkFlagDirname("dir")
}

func newCertsRequestCmd(streams Streams) *cobra.Command {
	o := &certsCSROptions{}
	cmd := &cobra.Command{
		Use:   "request NAME [--groups g1,g2] [--expiration 90d] [--kubeconfig FILE] [--dir DIR]",
		Short: "Make a key for a new user and ask the server to sign it through a CertificateSigningRequest",
		Long: "Make a key for the user NAME in --dir (NAME.key, never sent anywhere) and submit a CertificateSigningRequest\n" +
			"named NAME for the kubernetes.io/kube-apiserver-client signer (CN NAME, one O per --groups entry), with\n" +
			"--kubeconfig. Once someone approves it (kubectl certificate approve NAME), the server signs it with its CA and\n" +
			"apictl certs fetch NAME writes the user's kubeconfig: the CA key never leaves the server.",
		Args: exactArgs(1, "one argument, the user's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			o.name = args[0]
			return runCertsRequest(cmd.Context(), streams, o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringSliceVar(&o.groups, "groups", nil, "The user's groups, comma separated (the certificate's organizations).")
	addKeyAlgorithmFlag(cmd, &o.keyAlgorithm, "Algorithm of the key. If blank, "+string(certs.DefaultKeyAlgorithm)+".")
	durationFlag(cmd, &o.expiration, "expiration", 0, "How long the certificate should be valid (spec.expirationSeconds, at least 10m). If 0, as long as the server gives (--cluster-signing-duration).")
	return cmd
}

func runCertsRequest(ctx context.Context, streams Streams, o *certsCSROptions) error {
	res, err := certs.Request(ctx, o.spec())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "certificatesigningrequest/%s submitted; the key is in %s\n"+
		"next: kubectl certificate approve %s, then apictl certs fetch %s\n", res.Name, res.KeyFile, res.Name, res.Name)
	return err
}

func newCertsFetchCmd(streams Streams) *cobra.Command {
	o := &certsCSROptions{}
	cmd := &cobra.Command{
		Use:   "fetch NAME [--wait 5m] [--kubeconfig FILE] [--dir DIR] [--kubeconfig-out FILE]",
		Short: "Fetch the signed certificate of apictl certs request NAME and write the user's kubeconfig",
		Long: "Read the CertificateSigningRequest NAME, waiting up to --wait for its approval and signature, check that the\n" +
			"certificate is for the key in --dir (NAME.key), and write a kubeconfig with the certificate, the key and the\n" +
			"server and CA of --kubeconfig: --kubeconfig-out, or NAME.kubeconfig in --dir. The server deletes an issued\n" +
			"request an hour after its approval: fetch it before.",
		Args: exactArgs(1, "one argument, the user's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyServeEnv(cmd); err != nil {
				return err
			}
			o.name = args[0]
			return runCertsFetch(cmd.Context(), streams, o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "Where to write the user's kubeconfig. If blank, NAME.kubeconfig in --dir.")
	cmd.Flags().DurationVar(&o.wait, "wait", 0, "How long to wait for the approval and the signature. If 0, fetch what is there now.")
	_ = cmd.MarkFlagFilename("kubeconfig-out")
	return cmd
}

func runCertsFetch(ctx context.Context, streams Streams, o *certsCSROptions) error {
	res, err := certs.Fetch(ctx, o.spec())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "wrote %s: user %s, certificate valid until %s\n", res.KubeconfigFile, res.Name, certs.FormatTime(*res.NotAfter))
	return err
}
