// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/certificates/validation/validation.go (the
// CertificateSigningRequest part) for
// certificates.k8s.io/v1: the v1beta1 tolerances are gone, those of stored objects are kept.

package certificatesigningrequests

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds/validation"
)

var (
	// trueConditionTypes may only have the status True.
	trueConditionTypes = sets.New(certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed)
	trueStatusOnly     = sets.New(string(corev1.ConditionTrue))
	allStatusValues    = sets.New(string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown))

	allValidUsages = sets.New(
		certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
		certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly,
		certificatesv1.UsageDecipherOnly, certificatesv1.UsageAny, certificatesv1.UsageServerAuth,
		certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning, certificatesv1.UsageEmailProtection,
		certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
		certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
		certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
	)
)

// legacyUnknownSignerName is the signer of CSRs from before signers (certificates.k8s.io/v1beta1's
// default): v1 refuses it on create and keeps the objects that have it.
const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

// validationOptions are kube's certificateValidationOptions: what a subresource may write, and the
// problems tolerated because the stored object already has them.
type validationOptions struct {
	allowSettingApprovalConditions bool
	allowSettingCertificate        bool

	allowBothApprovedAndDenied   bool
	allowLegacySignerName        bool
	allowDuplicateConditionTypes bool
	allowEmptyConditionType      bool
	allowArbitraryCertificate    bool
	allowUnknownUsages           bool
	allowDuplicateUsages         bool
}

// optionsFor is kube's getValidationOptions; old is nil for a create.
func optionsFor(csr, old *certificatesv1.CertificateSigningRequest) validationOptions {
	if old == nil {
		return validationOptions{}
	}
	approved, denied := hasCondition(old, certificatesv1.CertificateApproved), hasCondition(old, certificatesv1.CertificateDenied)
	return validationOptions{
		allowBothApprovedAndDenied:   approved && denied,
		allowLegacySignerName:        old.Spec.SignerName == legacyUnknownSignerName,
		allowDuplicateConditionTypes: hasDuplicateConditionTypes(old),
		allowEmptyConditionType:      hasCondition(old, ""),
		allowArbitraryCertificate:    bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || validateCertificate(old.Status.Certificate) != nil,
		allowUnknownUsages:           hasUnknownUsage(old.Spec.Usages),
		allowDuplicateUsages:         hasDuplicateUsage(old.Spec.Usages),
	}
}

// validateCreate is kube's ValidateCertificateSigningRequestCreate without the metadata checks,
// which the registry makes.
func validateCreate(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validateCSR(csr, optionsFor(csr, nil))
}

func validateCSR(csr *certificatesv1.CertificateSigningRequest, opts validationOptions) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	if err := checkRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(specPath.Child("usages"), ""))
	}
	if !opts.allowUnknownUsages {
		for i, usage := range csr.Spec.Usages {
			if !allValidUsages.Has(usage) {
				errs = append(errs, field.NotSupported(specPath.Child("usages").Index(i), usage, sets.List(allValidUsages)))
			}
		}
	}
	if !opts.allowDuplicateUsages {
		seen := make(map[certificatesv1.KeyUsage]bool, len(csr.Spec.Usages))
		for i, usage := range csr.Spec.Usages {
			if seen[usage] {
				errs = append(errs, field.Duplicate(specPath.Child("usages").Index(i), usage))
			}
			seen[usage] = true
		}
	}
	if !opts.allowLegacySignerName && csr.Spec.SignerName == legacyUnknownSignerName {
		errs = append(errs, field.Invalid(specPath.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validation.SignerName(specPath.Child("signerName"), csr.Spec.SignerName)...)
	}
	if csr.Spec.ExpirationSeconds != nil && *csr.Spec.ExpirationSeconds < 600 {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), *csr.Spec.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(field.NewPath("status", "conditions"), csr, opts)...)
	if !opts.allowArbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// checkRequest is kube's validateCSR: one PEM CERTIFICATE REQUEST whose signature holds.
func checkRequest(data []byte) error {
	csr, err := ParseCSR(data)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// ParseCSR decodes a PEM-encoded CERTIFICATE REQUEST, as kube's certificates.ParseCSR.
func ParseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

func validateCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

func validateConditions(fldPath *field.Path, csr *certificatesv1.CertificateSigningRequest, opts validationOptions) field.ErrorList {
	var errs field.ErrorList
	seenTypes := map[certificatesv1.RequestConditionType]bool{}
	hasApproved, hasDenied := false, false
	for i, c := range csr.Status.Conditions {
		if !opts.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(fldPath.Index(i).Child("type"), ""))
		}
		allowed := allStatusValues
		if trueConditionTypes.Has(c.Type) {
			allowed = trueStatusOnly
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(fldPath.Index(i).Child("status"), ""))
		case !allowed.Has(string(c.Status)):
			errs = append(errs, field.NotSupported(fldPath.Index(i).Child("status"), c.Status, sets.List(allowed)))
		}
		switch c.Type {
		case certificatesv1.CertificateApproved:
			hasApproved = true
		case certificatesv1.CertificateDenied:
			hasDenied = true
		}
		if !opts.allowDuplicateConditionTypes {
			if seenTypes[c.Type] {
				errs = append(errs, field.Duplicate(fldPath.Index(i).Child("type"), c.Type))
			}
			seenTypes[c.Type] = true
		}
	}
	if hasApproved && hasDenied && !opts.allowBothApprovedAndDenied {
		// kube v1.37 reports this through its declarative validation (zeroOrOneOf), in its words.
		errs = append(errs, field.Invalid(fldPath, `{conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]}`,
			"must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"))
	}
	return errs
}

// validateUpdate is kube's validateCertificateSigningRequestUpdate without the metadata checks.
func validateUpdate(csr, old *certificatesv1.CertificateSigningRequest, opts validationOptions) field.ErrorList {
	errs := validateCSR(csr, opts)
	conditions := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(findConditions(csr, t)) < len(findConditions(old, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oldConditions, newConditions := findConditions(old, t), findConditions(csr, t)
			switch {
			case len(newConditions) < len(oldConditions):
				// refused above
			case len(newConditions) > len(oldConditions):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(oldConditions, newConditions):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, diff.Diff(oldConditions, newConditions))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		switch {
		case !opts.allowSettingCertificate:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not set certificate content"))
		case len(old.Status.Certificate) > 0:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return errs
}

func findConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

func hasDuplicateConditionTypes(csr *certificatesv1.CertificateSigningRequest) bool {
	seen := map[certificatesv1.RequestConditionType]bool{}
	for _, c := range csr.Status.Conditions {
		if seen[c.Type] {
			return true
		}
		seen[c.Type] = true
	}
	return false
}

func hasUnknownUsage(usages []certificatesv1.KeyUsage) bool {
	for _, u := range usages {
		if !allValidUsages.Has(u) {
			return true
		}
	}
	return false
}

func hasDuplicateUsage(usages []certificatesv1.KeyUsage) bool {
	seen := make(map[certificatesv1.KeyUsage]bool, len(usages))
	for _, u := range usages {
		if seen[u] {
			return true
		}
		seen[u] = true
	}
	return false
}
