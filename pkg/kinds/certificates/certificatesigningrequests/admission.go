// Ported from k8s.io/kubernetes v1.37.2 plugin/pkg/admission/certificates/{approval,signing,
// subjectrestriction}/admission.go and pkg/certauthorization/certauthorization.go.

package certificatesigningrequests

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// admitApproval is CertificateApproval: approving or denying a request needs the approve verb on
// its signer (certificates.k8s.io signers, by name or by domain/*).
func admitApproval(ctx context.Context, a admission.Attributes, authz authorizer.Authorizer) error {
	if a.GetOperation() != admission.Update || a.GetSubresource() != approval {
		return nil
	}
	old, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetOldObject()))
	}
	if !AuthorizedForSigner(ctx, authz, a.GetUserInfo(), "approve", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// admitSigning is CertificateSigning: a status write that changes the certificate or the conditions
// needs the sign verb on the request's signer.
func admitSigning(ctx context.Context, a admission.Attributes, authz authorizer.Authorizer) error {
	if a.GetOperation() != admission.Update || a.GetSubresource() != "status" {
		return nil
	}
	old, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetOldObject()))
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetObject()))
	}
	if string(old.Status.Certificate) == string(csr.Status.Certificate) && apiequality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !AuthorizedForSigner(ctx, authz, a.GetUserInfo(), "sign", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// admitSubject is CertificateSubjectRestriction: the kube-apiserver-client signer never signs for
// system:masters, whoever approves.
func admitSubject(_ context.Context, a admission.Attributes, _ authorizer.Authorizer) error {
	if a.GetOperation() != admission.Create || a.GetSubresource() != "" {
		return nil
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.GetObject()))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	parsed, err := ParseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	for _, group := range parsed.Subject.Organization {
		if group == user.SystemPrivilegedGroup {
			return admission.NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
		}
	}
	return nil
}

// AuthorizedForSigner is kube's IsAuthorizedForSignerName: verb on the signers resource named
// signerName, or failing that on "<domain>/*".
func AuthorizedForSigner(ctx context.Context, authz authorizer.Authorizer, u user.Info, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := authz.Authorize(ctx, authorizer.AttributesRecord{
			User: u, Verb: verb, Name: name, APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", ResourceRequest: true,
		})
		if err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}

// pathSegmentName allows any name the store can key.
func pathSegmentName(name string, _ bool) []string { return content.IsPathSegmentName(name) }
