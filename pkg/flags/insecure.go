package flags

import (
	"net"

	"github.com/spf13/pflag"
)

// InsecureServingOptions configure the plain-HTTP listener. It has no authentication and no
// authorization: every request acts as system:unsecured in system:masters. That is why it binds to
// loopback by default and why a non-loopback address draws a warning.
type InsecureServingOptions struct {
	BindAddress string
	// BindPort is the HTTP port; 0 turns insecure serving off.
	BindPort int
	// Listener, when set, is already bound and BindPort is its port (tests). Not a flag.
	Listener net.Listener
}

// NewInsecureServingOptions returns kube-apiserver 1.19's defaults: 127.0.0.1:8080.
func NewInsecureServingOptions() *InsecureServingOptions {
	return &InsecureServingOptions{BindAddress: "127.0.0.1", BindPort: 8080}
}

// AddFlags registers the insecure serving flags with the current values as defaults.
func (o *InsecureServingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "insecure-bind-address", o.BindAddress,
		"The IP address on which to serve --insecure-port. Requests there skip authentication and authorization: keep it on loopback.")
	fs.IntVar(&o.BindPort, "insecure-port", o.BindPort,
		"The port on which to serve unsecured, unauthenticated access. If 0, don't serve plain HTTP at all.")
}

// Complete has nothing to fill in.
func (o *InsecureServingOptions) Complete() error { return nil }

// Validate reports every problem with the insecure serving settings.
func (o *InsecureServingOptions) Validate() []error {
	const s = SectionInsecureServing
	var errs []error
	if p := checkIP(s, "insecure-bind-address", o.BindAddress); p != nil {
		errs = append(errs, p)
	}
	if p := checkPort(s, "insecure-port", o.BindPort, "insecure serving"); p != nil {
		errs = append(errs, p)
	}
	return errs
}

// Warnings flags an insecure listener reachable from other machines.
func (o *InsecureServingOptions) Warnings() []*Problem {
	ip := net.ParseIP(o.BindAddress)
	if o.BindPort == 0 || ip == nil || ip.IsLoopback() {
		return nil
	}
	return []*Problem{problemf(SectionInsecureServing, "insecure-bind-address", o.BindAddress,
		"is not a loopback address: anyone who can reach it has full, unauthenticated control of the API; bind it to 127.0.0.1 or set --insecure-port 0")}
}
