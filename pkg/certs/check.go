package certs

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"time"
)

// checkSignedBy reports whether ca signed cert: the issuer names ca's subject and ca's key made the
// signature. Validity periods are checked separately, so that an expired pair still reads as chained.
func checkSignedBy(cert, ca *x509.Certificate) error {
	if !bytes.Equal(cert.RawIssuer, ca.RawSubject) {
		return fmt.Errorf("issued by %q, not by %q", cert.Issuer.String(), ca.Subject.String())
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return fmt.Errorf("not signed by the key of %q: %w", ca.Subject.String(), err)
	}
	return nil
}

// timeProblem says why cert is not valid at now ("expired on ...", "not valid until ..."), or "".
func timeProblem(cert *x509.Certificate, now time.Time) string {
	switch {
	case now.After(cert.NotAfter):
		return "expired on " + FormatTime(cert.NotAfter)
	case now.Before(cert.NotBefore):
		return "not valid until " + FormatTime(cert.NotBefore)
	}
	return ""
}

// usageProblem says which of the wanted usages cert lacks, or "".
func usageProblem(cert *x509.Certificate, want usage) string {
	if cert.IsCA {
		return "is a CA certificate where a leaf belongs"
	}
	if missing := want &^ usageOf(cert); missing != 0 {
		return "lacks " + missing.String()
	}
	return ""
}

// caProblem says why cert cannot act as a CA, or "".
func caProblem(cert *x509.Certificate) string {
	switch {
	case !cert.IsCA || !cert.BasicConstraintsValid:
		return "is not a CA certificate (basic constraints CA:FALSE)"
	case cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0:
		return "is a CA certificate without the cert sign key usage"
	}
	return ""
}
