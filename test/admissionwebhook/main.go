// Command admissionwebhook is an admission webhook for tests: it answers AdmissionReview v1 over
// HTTPS, with a behaviour per path, so that one process serves every webhook a test configures:
//
//	POST /mutate/KEY=VALUE         adds the label with a JSONPatch and returns a warning
//	POST /deny/NAME/CODE/MESSAGE   refuses the request for an object named NAME (code CODE, message
//	                               MESSAGE, path-escaped); allows the others
//	POST /sleep/SECONDS            answers (allowed) after SECONDS, or when the caller gives up
//	POST /allow, /allow/TAG        allows (TAG tells hooks apart in the counts)
//	GET  /calls                    the reviews received so far, by path: {"/allow/x":{"total":2,"dryRun":1}}
//
// The parameters are path segments because kube refuses webhook URLs with a query.
//
// It listens on 127.0.0.1 port 0 unless told otherwise and prints its base URL
// (https://127.0.0.1:PORT) on stdout once it serves. Its serving certificate comes from
// --tls-cert-file and --tls-private-key-file. Each review is logged on stderr as
// `review path=/mutate operation=CREATE resource=configmaps name=x dryRun=false`. SIGTERM or SIGINT
// stops it: exit code 0, 1 on a failure, 2 on bad flags.
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
}

// Main runs the webhook until a signal and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admissionwebhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate (PEM)")
	fs.StringVar(&o.keyFile, "tls-private-key-file", "", "key of --tls-cert-file (PEM)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.certFile == "" || o.keyFile == "" {
		fmt.Fprintln(stderr, "admissionwebhook: --tls-cert-file and --tls-private-key-file are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, o, stdout, stderr); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "admissionwebhook: %v\n", err)
		return 1
	}
	return 0
}
