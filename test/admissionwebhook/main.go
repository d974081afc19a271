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
	"io"
	"os"

	"github.com/apictl/apictl/internal/webhooktest"
)

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }

// Main runs the webhook until a signal and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admissionwebhook", flag.ContinueOnError)
	var o webhooktest.Flags
	o.AddFlags(fs, "serving certificate (PEM)")
	validate := func() error {
		if o.CertFile == "" || o.KeyFile == "" {
			return errors.New("--tls-cert-file and --tls-private-key-file are required")
		}
		return nil
	}
	return webhooktest.Main("admissionwebhook", fs, args, stderr, validate, func(ctx context.Context) error {
		cert, err := o.LoadCertificate()
		if err != nil {
			return err
		}
		return webhooktest.Serve(ctx, o.Listen, cert, newWebhook(stderr).routes(), stdout, "")
	})
}
