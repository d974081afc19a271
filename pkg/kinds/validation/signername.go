// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/names.go (ValidateSignerName).

package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SignerName is kube's ValidateSignerName's: signerName is a domain with at least two labels, one slash, and a
// path of DNS subdomains separated by dots, 571 characters at most.
func SignerName(fldPath *field.Path, signerName string) field.ErrorList {
	var el field.ErrorList
	if signerName == "" {
		return append(el, field.Required(fldPath, ""))
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return append(el, field.Invalid(fldPath, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	maxDomain := validation.DNS1123SubdomainMaxLength
	if len(segments[0]) > maxDomain {
		el = append(el, field.TooLong(fldPath, "", maxDomain))
	}
	domainLabels := strings.Split(segments[0], ".")
	for _, lbl := range domainLabels {
		if errs := validation.IsDNS1123Label(lbl); len(errs) > 0 {
			for _, err := range errs {
				el = append(el, field.Invalid(fldPath, segments[0], fmt.Sprintf("validating label %q: %s", lbl, err)))
			}
			break
		}
	}
	if len(domainLabels) < 2 {
		el = append(el, field.Invalid(fldPath, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, lbl := range strings.Split(segments[1], ".") {
		if errs := validation.IsDNS1123Subdomain(lbl); len(errs) > 0 {
			for _, err := range errs {
				el = append(el, field.Invalid(fldPath, segments[1], fmt.Sprintf("validating label %q: %s", lbl, err)))
			}
			break
		}
	}
	maxPath := validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1
	if maxName := maxDomain + maxPath + 1; len(signerName) > maxName {
		el = append(el, field.TooLong(fldPath, "", maxName))
	}
	return el
}
