package flags

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// SecureServingOptions configure the TLS listener.
type SecureServingOptions struct {
	// BindAddress is the IP to listen on; 0.0.0.0 or :: listens on every interface.
	BindAddress string
	// BindPort is the TLS port; 0 turns secure serving off.
	BindPort int
	// CertDir holds the self-signed PKI when no certificate files are given. Completed to <data-dir>/pki.
	CertDir string
	// CertFile and KeyFile are the serving pair; when empty a pair is made in CertDir.
	CertFile, KeyFile string
	// MinTLSVersion is a crypto/tls version name such as VersionTLS12.
	MinTLSVersion string
	// CipherSuites are crypto/tls cipher suite names; empty means Go's defaults.
	CipherSuites []string
	// HTTP2MaxStreamsPerConnection bounds concurrent HTTP/2 streams per client connection.
	HTTP2MaxStreamsPerConnection int

	// Listener, when set, is already bound and BindPort is its port: tests bind port 0 to learn a
	// free port without a race. Not a flag.
	Listener net.Listener

	// advertiseAddress and externalHostname come from the generic section (see ServerOptions.Complete):
	// the self-signed serving certificate must name them.
	advertiseAddress, externalHostname string
}

// NewSecureServingOptions returns kube-apiserver's defaults.
func NewSecureServingOptions() *SecureServingOptions {
	return &SecureServingOptions{
		BindAddress:                  "0.0.0.0",
		BindPort:                     6443,
		MinTLSVersion:                "VersionTLS12",
		HTTP2MaxStreamsPerConnection: 250,
	}
}

// tlsVersions maps the names --tls-min-version accepts to crypto/tls versions.
var tlsVersions = map[string]uint16{
	"VersionTLS10": tls.VersionTLS10,
	"VersionTLS11": tls.VersionTLS11,
	"VersionTLS12": tls.VersionTLS12,
	"VersionTLS13": tls.VersionTLS13,
}

// TLSVersion returns the crypto/tls version for a --tls-min-version name.
func TLSVersion(name string) (uint16, bool) {
	v, ok := tlsVersions[name]
	return v, ok
}

// CipherSuite returns the crypto/tls ID of a cipher suite name, secure or not.
func CipherSuite(name string) (uint16, bool) {
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, c := range list {
			if c.Name == name {
				return c.ID, true
			}
		}
	}
	return 0, false
}

// TLSVersionNames lists the values --tls-min-version accepts, sorted.
func TLSVersionNames() []string {
	names := make([]string, 0, len(tlsVersions))
	for n := range tlsVersions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CipherSuiteNames lists every cipher suite name Go knows, secure ones first.
func CipherSuiteNames() []string {
	var names []string
	for _, c := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		names = append(names, c.Name)
	}
	return names
}

func cipherSuiteNames(list []*tls.CipherSuite) string {
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// AddFlags registers the secure serving flags with the current values as defaults.
func (o *SecureServingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress,
		"The IP address on which to listen for the --secure-port port. If blank or an unspecified address (0.0.0.0 or ::), all interfaces are used.")
	fs.IntVar(&o.BindPort, "secure-port", o.BindPort, "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir,
		"The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. If blank, <data-dir>/pki.")
	fs.StringVar(&o.CertFile, "tls-cert-file", o.CertFile,
		"File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert). If HTTPS serving is enabled, and --tls-cert-file and "+
			"--tls-private-key-file are not provided, a self-signed certificate and key are generated in --cert-dir.")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", o.KeyFile, "File containing the default x509 private key matching --tls-cert-file.")
	fs.StringVar(&o.MinTLSVersion, "tls-min-version", o.MinTLSVersion,
		"Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13")
	fs.StringSliceVar(&o.CipherSuites, "tls-cipher-suites", o.CipherSuites,
		"Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be used.\n"+
			"Preferred values: "+cipherSuiteNames(tls.CipherSuites())+".\n"+
			"Insecure values: "+cipherSuiteNames(tls.InsecureCipherSuites())+".")
	fs.IntVar(&o.HTTP2MaxStreamsPerConnection, "http2-max-streams-per-connection", o.HTTP2MaxStreamsPerConnection,
		"The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means to use golang's default.")
}

// Complete has nothing of its own to fill in; the cert dir defaults from the data dir in ServerOptions.
func (o *SecureServingOptions) Complete() error { return nil }

// Validate reports every problem with the secure serving settings.
func (o *SecureServingOptions) Validate() []error {
	const s = SectionSecureServing
	var errs problemList
	errs.add(checkIP(s, "bind-address", o.BindAddress))
	errs.add(checkPort(s, "secure-port", o.BindPort, "secure serving"))
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		errs.add(problemf(s, "tls-private-key-file", "", "must be given with --tls-cert-file: the certificate needs its key"))
	case o.CertFile == "" && o.KeyFile != "":
		errs.add(problemf(s, "tls-cert-file", "", "must be given with --tls-private-key-file: the key needs its certificate"))
	}
	certProblem := checkReadableFile(s, "tls-cert-file", o.CertFile)
	keyProblem := checkReadableFile(s, "tls-private-key-file", o.KeyFile)
	errs.add(certProblem)
	errs.add(keyProblem)
	if o.CertFile != "" && o.KeyFile != "" && certProblem == nil && keyProblem == nil {
		for _, p := range checkServingPair(o.CertFile, o.KeyFile) {
			errs.add(p)
		}
	}
	version, ok := TLSVersion(o.MinTLSVersion)
	if !ok {
		errs.add(problemf(s, "tls-min-version", o.MinTLSVersion, "is not a TLS version: use one of %s", strings.Join(TLSVersionNames(), ", ")))
	}
	for _, name := range o.CipherSuites {
		if _, ok := CipherSuite(name); !ok {
			errs.add(problemf(s, "tls-cipher-suites", name, "is not a cipher suite Go knows: see --help for the names"))
		}
	}
	if ok && version == tls.VersionTLS13 && len(o.CipherSuites) > 0 {
		errs.add(problemf(s, "tls-cipher-suites", strings.Join(o.CipherSuites, ","),
			"cannot be set when --tls-min-version is VersionTLS13: TLS 1.3 cipher suites are not configurable"))
	}
	if o.HTTP2MaxStreamsPerConnection < 0 {
		errs.add(problemf(s, "http2-max-streams-per-connection", strconv.Itoa(o.HTTP2MaxStreamsPerConnection),
			"can not be negative: use 0 for Go's default or a positive number"))
	}
	return errs
}

// checkServingPair checks each file on its own before the two together, so that a problem names the
// flag of the file that has it: tls.LoadX509KeyPair reports a certificate that does not parse as a
// key that does not go with it (issue 36).
func checkServingPair(certFile, keyFile string) []*Problem {
	const s = SectionSecureServing
	var problems []*Problem
	if err := checkCertificates(certFile); err != nil {
		problems = append(problems, problemf(s, "tls-cert-file", certFile, "%v", err))
	}
	if err := checkPrivateKey(keyFile); err != nil {
		problems = append(problems, problemf(s, "tls-private-key-file", keyFile, "%v", err))
	}
	if len(problems) > 0 {
		return problems
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return []*Problem{problemf(s, "tls-private-key-file", keyFile,
			"does not go with --tls-cert-file %s: %v; give the key the certificate was issued for", certFile, err)}
	}
	return nil
}

// checkPrivateKey requires a private key that crypto/tls can load: the first PEM block whose type
// ends in PRIVATE KEY, in PKCS #1, PKCS #8 or SEC 1, as tls.X509KeyPair reads it.
func checkPrivateKey(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return unwrapPathError(err)
	}
	sawCertificate := false
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			sawCertificate = true
		}
		if block.Type != "PRIVATE KEY" && !strings.HasSuffix(block.Type, " PRIVATE KEY") {
			continue
		}
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			return nil
		}
		if _, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
			return nil
		}
		return fmt.Errorf("holds a %s block that is not an RSA, ECDSA or Ed25519 key in PKCS #1, PKCS #8 or SEC 1 form: give an unencrypted private key", block.Type)
	}
	if sawCertificate {
		return errors.New("holds a certificate but no private key: give the key file (-----BEGIN PRIVATE KEY-----), not the certificate")
	}
	return errors.New("holds no PEM private key: give a file with a -----BEGIN PRIVATE KEY----- (or RSA/EC PRIVATE KEY) block")
}
