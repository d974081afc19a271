package certs

import (
	"crypto/sha1" //nolint:gosec // SHA-1 fingerprints are printed for parity with openssl's default, not trusted
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"strings"
	"time"
)

// Info describes a certificate for people and machines.
type Info struct {
	Subject      string    `json:"subject"`
	Issuer       string    `json:"issuer"`
	SerialNumber string    `json:"serialNumber"`
	NotBefore    time.Time `json:"notBefore"`
	NotAfter     time.Time `json:"notAfter"`
	// SANs are the DNS names, IP addresses, email addresses and URIs the certificate names.
	SANs []string `json:"sans"`
	// Usages are the key usages and extended key usages, in cfssl's words (digital signature,
	// server auth, ...).
	Usages             []string `json:"usages"`
	IsCA               bool     `json:"isCA"`
	KeyAlgorithm       string   `json:"keyAlgorithm"`
	SignatureAlgorithm string   `json:"signatureAlgorithm"`
	// Fingerprints are colon-separated upper-case hex, as openssl x509 -fingerprint prints them.
	SHA256Fingerprint string `json:"sha256Fingerprint"`
	SHA1Fingerprint   string `json:"sha1Fingerprint"`
}

// Describe reads what people ask about a certificate.
func Describe(cert *x509.Certificate) Info {
	sha256Sum := sha256.Sum256(cert.Raw)
	sha1Sum := sha1.Sum(cert.Raw) //nolint:gosec // see the import
	return Info{
		Subject:            cert.Subject.String(),
		Issuer:             cert.Issuer.String(),
		SerialNumber:       colonHex(cert.SerialNumber.Bytes()),
		NotBefore:          cert.NotBefore.UTC(),
		NotAfter:           cert.NotAfter.UTC(),
		SANs:               sans(cert),
		Usages:             usages(cert),
		IsCA:               cert.IsCA,
		KeyAlgorithm:       algorithmOf(cert.PublicKey),
		SignatureAlgorithm: cert.SignatureAlgorithm.String(),
		SHA256Fingerprint:  colonHex(sha256Sum[:]),
		SHA1Fingerprint:    colonHex(sha1Sum[:]),
	}
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":")
}

func sans(cert *x509.Certificate) []string {
	out := append([]string{}, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		out = append(out, ip.String())
	}
	out = append(out, cert.EmailAddresses...)
	for _, u := range cert.URIs {
		out = append(out, u.String())
	}
	return out
}

var keyUsageNames = []struct {
	usage x509.KeyUsage
	name  string
}{
	{x509.KeyUsageDigitalSignature, "digital signature"},
	{x509.KeyUsageContentCommitment, "content commitment"},
	{x509.KeyUsageKeyEncipherment, "key encipherment"},
	{x509.KeyUsageDataEncipherment, "data encipherment"},
	{x509.KeyUsageKeyAgreement, "key agreement"},
	{x509.KeyUsageCertSign, "cert sign"},
	{x509.KeyUsageCRLSign, "crl sign"},
	{x509.KeyUsageEncipherOnly, "encipher only"},
	{x509.KeyUsageDecipherOnly, "decipher only"},
}

var extKeyUsageNames = map[x509.ExtKeyUsage]string{
	x509.ExtKeyUsageAny:             "any",
	x509.ExtKeyUsageServerAuth:      "server auth",
	x509.ExtKeyUsageClientAuth:      "client auth",
	x509.ExtKeyUsageCodeSigning:     "code signing",
	x509.ExtKeyUsageEmailProtection: "email protection",
	x509.ExtKeyUsageTimeStamping:    "timestamping",
	x509.ExtKeyUsageOCSPSigning:     "ocsp signing",
}

func usages(cert *x509.Certificate) []string {
	out := []string{}
	for _, ku := range keyUsageNames {
		if cert.KeyUsage&ku.usage != 0 {
			out = append(out, ku.name)
		}
	}
	for _, eku := range cert.ExtKeyUsage {
		name, ok := extKeyUsageNames[eku]
		if !ok {
			name = fmt.Sprintf("extended key usage %d", eku)
		}
		out = append(out, name)
	}
	for _, oid := range cert.UnknownExtKeyUsage {
		out = append(out, oid.String())
	}
	return out
}
