package flags

import (
	"net"

	"github.com/spf13/pflag"
)

// InsecureServingOptions configure the plain-HTTP listener. It has no authentication and no
// authorization: every request acts as system:unsecured in system:masters. That is why it binds to
// loopback, answers only requests addressed to a loopback host (a web page cannot reach it through DNS
// rebinding), and takes another address only with a flag whose name says what it costs.
type InsecureServingOptions struct {
	BindAddress string
	// BindPort is the HTTP port; 0 turns insecure serving off.
	BindPort int
	// AllowRemote accepts a non-loopback BindAddress and any Host header.
	AllowRemote bool
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
	fs.BoolVar(&o.AllowRemote, allowRemoteFlag, o.AllowRemote,
		"Let --insecure-bind-address be a non-loopback address and answer any Host on the plain port. Anyone who can reach it then has full, unauthenticated control of the API.")
}

// allowRemoteFlag is the opt-in to an insecure port off loopback, named so that nobody sets it by accident.
const allowRemoteFlag = "insecure-port-allow-unauthenticated-remote-access"

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
	if o.offLoopback() && !o.AllowRemote {
		errs = append(errs, problemf(s, "insecure-bind-address", o.BindAddress,
			"is not a loopback address: the plain port has no authentication, so anyone who reaches it controls the API; bind it to 127.0.0.1, turn it off with --insecure-port 0, or accept the risk with --%s", allowRemoteFlag))
	}
	return errs
}

// offLoopback reports whether the plain port is on and bound to an address other machines may reach.
func (o *InsecureServingOptions) offLoopback() bool {
	ip := net.ParseIP(o.BindAddress)
	return o.BindPort != 0 && ip != nil && !ip.IsLoopback()
}

// Warnings flags an insecure listener reachable from other machines, which the opt-in allowed.
func (o *InsecureServingOptions) Warnings() []*Problem {
	if !o.offLoopback() || !o.AllowRemote {
		return nil
	}
	return []*Problem{problemf(SectionInsecureServing, "insecure-bind-address", o.BindAddress,
		"is not a loopback address: anyone who can reach it has full, unauthenticated control of the API; bind it to 127.0.0.1 or set --insecure-port 0")}
}
