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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command's flags.
type options struct {
	listen   string
	certFile string
	keyFile  string
	caFile   string
}

// Main runs the webhook until a signal and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conversionwebhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate (PEM); made at start when empty")
	fs.StringVar(&o.keyFile, "tls-private-key-file", "", "key of --tls-cert-file (PEM)")
	fs.StringVar(&o.caFile, "ca-file", "", "where to write the CA of the certificate made at start (PEM), for the CRD's caBundle")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (o.certFile == "") != (o.keyFile == "") {
		fmt.Fprintln(stderr, "conversionwebhook: --tls-cert-file and --tls-private-key-file go together")
		return 2
	}
	if o.certFile == "" && o.caFile == "" {
		fmt.Fprintln(stderr, "conversionwebhook: --ca-file is required when the certificate is made at start")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, o, stdout, stderr); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "conversionwebhook: %v\n", err)
		return 1
	}
	return 0
}
