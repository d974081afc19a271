// Command conversionwebhook is a CRD conversion webhook for tests: it answers ConversionReview v1 over
// HTTPS, converting the example.com Gizmo kind between v1 (spec.size) and v2 (spec.replicas); every
// other field is kept. It listens on 127.0.0.1 port 0 unless told otherwise and prints its URL
// (https://127.0.0.1:PORT/convert) on stdout once it serves.
//
// Its serving certificate comes from --tls-cert-file and --tls-private-key-file, or, without them, is
// made at start with a CA of its own, written to --ca-file for the CRD's caBundle. Each review is logged
// on stderr as `review desired=example.com/v2 objects=3`, so that tests can see how requests were
// batched. SIGTERM or SIGINT stops it: exit code 0, 1 on a failure, 2 on bad flags.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/apictl/apictl/internal/webhooktest"
)

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command's flags.
type options struct {
	webhooktest.Flags
	caFile string
}

// Main runs the webhook until a signal and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conversionwebhook", flag.ContinueOnError)
	var o options
	o.AddFlags(fs, "serving certificate (PEM); made at start when empty")
	fs.StringVar(&o.caFile, "ca-file", "", "where to write the CA of the certificate made at start (PEM), for the CRD's caBundle")
	validate := func() error {
		if (o.CertFile == "") != (o.KeyFile == "") {
			return errors.New("--tls-cert-file and --tls-private-key-file go together")
		}
		if o.CertFile == "" && o.caFile == "" {
			return errors.New("--ca-file is required when the certificate is made at start")
		}
		return nil
	}
	return webhooktest.Main("conversionwebhook", fs, args, stderr, validate, func(ctx context.Context) error {
		cert, err := servingCertificate(o)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("POST /convert", &converter{log: stderr})
		return webhooktest.Serve(ctx, o.Listen, cert, mux, stdout, "/convert")
	})
}

// servingCertificate loads the certificate the flags name, or makes one with a new CA and writes the
// CA to o.caFile.
func servingCertificate(o options) (tls.Certificate, error) {
	if o.CertFile != "" {
		return o.LoadCertificate()
	}
	certs, err := webhooktest.NewCertificates("conversionwebhook")
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(o.caFile, certs.CA, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("writing the CA: %w", err)
	}
	return certs.TLS()
}
