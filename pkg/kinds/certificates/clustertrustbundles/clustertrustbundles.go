// Package clustertrustbundles is the certificates.k8s.io/v1 ClusterTrustBundle kind, as
// kube-apiserver v1.37.2 serves it: a signer's (or nobody's) CA certificates, validated as PEM
// trust anchors, named after their signer, and written only by whoever may attest for that signer
// (kube's ClusterTrustBundleAttest admission plugin).
package clustertrustbundles

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"reflect"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/certificates/certificatesigningrequests"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/kinds/validation"
	"github.com/apictl/apictl/pkg/routes/model"
)

// maxTrustBundleSize is kube's limit on spec.trustBundle.
const maxTrustBundleSize = 1 * 1024 * 1024

// Kind describes ClusterTrustBundles.
func Kind() kinds.Kind {
	spec := certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()
	return kinds.Kind{
		Group:   certificatesv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:   "clustertrustbundles",
			Singular: "clustertrustbundle",
			Kind:     "ClusterTrustBundle",
			Verbs:    model.StandardVerbs(),
			// kube's field label conversion for ClusterTrustBundles.
			SelectableFields: []string{"spec.signerName"},
			// kube-apiserver v1.37.2 stores them as certificates.k8s.io/v1beta1, which discovery's
			// hash names.
			StorageVersionHash: model.StorageVersionHash(certificatesv1.GroupName, "v1beta1", "ClusterTrustBundle"),
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("SignerName", spec["signerName"], 0),
			},
			GoType:     reflect.TypeFor[certificatesv1.ClusterTrustBundle](),
			ListGoType: reflect.TypeFor[certificatesv1.ClusterTrustBundleList](),
		},
		// The name's rule depends on the signer: the strategy checks it (nameRule).
		NameRule: func(string, bool) []string { return nil },
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("SignerName", spec["signerName"])},
			Cells:   printers.Typed(cells),
		},
		Store:     kinds.StoreRules{RequireResourceVersion: true},
		Admission: []kinds.Admission{{Name: "ClusterTrustBundleAttest", Validate: admitAttest}},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/certificates/clustertrustbundle/strategy.go", Version: "v1.37.2", Parts: "strategy"},
			{Path: "pkg/apis/certificates/validation/validation.go", Version: "v1.37.2", Parts: "ValidateClusterTrustBundle, ValidateClusterTrustBundleUpdate, validateTrustBundle"},
			{Path: "pkg/apis/core/validation/names.go", Version: "v1.37.2", Parts: "ValidateClusterTrustBundleName"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printClusterTrustBundle"},
			{Path: "plugin/pkg/admission/certificates/ctbattest/admission.go", Version: "v1.37.2", Parts: "ClusterTrustBundleAttest"},
			{Path: "pkg/registry/rbac/helpers.go", Version: "v1.37.2", Parts: "IsOnlyMutatingGCFields"},
		},
	}
}

func cells(b *certificatesv1.ClusterTrustBundle, _ time.Time) []any {
	signer := "<none>"
	if b.Spec.SignerName != "" {
		signer = b.Spec.SignerName
	}
	return []any{b.Name, signer}
}

// strategy is kube's: nothing to prepare; the name, signer and bundle to validate.
type strategy struct{}

func (strategy) PrepareForCreate(runtime.Object)                 {}
func (strategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateBundle(obj.(*certificatesv1.ClusterTrustBundle), true)
}

// ValidateUpdate parses the bundle only when it changed, so that a change in Go's PEM or X.509
// parsing never locks a stored object, and keeps the signer.
func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	b, oldB := obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle)
	errs := validateBundle(b, b.Spec.TrustBundle != oldB.Spec.TrustBundle)
	return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, oldB.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

// validateBundle is ValidateClusterTrustBundle.
func validateBundle(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, nameRule(b.Spec.SignerName), field.NewPath("metadata"))
	if b.Spec.SignerName != "" {
		errs = append(errs, validation.SignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parse {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// nameRule is ValidateClusterTrustBundleName: a bundle of a signer is named
// "<signer with : for />:<DNS subdomain>"; one without a signer has no colon in its name.
func nameRule(signerName string) apivalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{"ClusterTrustBundle without signer name must not have \":\" in its name"}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		required := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, required) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, required)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, required), prefix)
	}
}

// validateTrustBundle refuses blocks other than CERTIFICATE, headers, certificates that are no
// CAs, duplicates, and a bundle without any trust anchor.
func validateTrustBundle(path *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(path, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	dedupe := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if msg := anchorProblem(b); msg != "" {
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("entry %d %s", i, msg)))
			continue
		}
		if _, seen := dedupe[string(b.Bytes)]; !seen {
			order = append(order, string(b.Bytes))
		}
		dedupe[string(b.Bytes)] = append(dedupe[string(b.Bytes)], i)
	}
	// A malformed block hides the duplicate and missing-anchor errors, which it may cause.
	if len(errs) != 0 {
		return errs
	}
	if len(dedupe) == 0 {
		errs = append(errs, field.Invalid(path, "<value omitted>", "at least one trust anchor must be provided"))
	}
	for _, k := range order {
		if indices := dedupe[k]; len(indices) > 1 {
			errs = append(errs, field.Invalid(path, "<value omitted>", fmt.Sprintf("duplicate trust anchor (indices %v)", indices)))
		}
	}
	return errs
}

// anchorProblem says what keeps a PEM block from being a trust anchor, in kube's words, or "".
func anchorProblem(b *pem.Block) string {
	if b.Type != "CERTIFICATE" {
		return fmt.Sprintf("has bad block type: %v", b.Type)
	}
	if len(b.Headers) != 0 {
		return "has PEM block headers"
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return "does not parse as X.509"
	case !cert.IsCA:
		return "does not have the CA bit set"
	case !cert.BasicConstraintsValid:
		return "has invalid basic constraints"
	}
	return ""
}

// admitAttest is ClusterTrustBundleAttest: writing a signer's bundle needs the attest verb on the
// signer, unless an update changes only what the garbage collector and field managers write.
func admitAttest(ctx context.Context, a admission.Attributes, authz authorizer.Authorizer) error {
	b, ok := a.GetObject().(*certificatesv1.ClusterTrustBundle)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.GetOldObject()))
	}
	if b.Spec.SignerName == "" {
		return nil
	}
	if old, ok := a.GetOldObject().(*certificatesv1.ClusterTrustBundle); ok && a.GetOperation() == admission.Update && onlyGCFields(b, old) {
		return nil
	}
	if !certificatesigningrequests.AuthorizedForSigner(ctx, authz, a.GetUserInfo(), "attest", b.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", b.Spec.SignerName))
	}
	return nil
}

// onlyGCFields is IsOnlyMutatingGCFields: b differs from old at most in owner references,
// finalizers, selfLink and managedFields.
func onlyGCFields(b, old *certificatesv1.ClusterTrustBundle) bool {
	c := b.DeepCopy()
	//lint:ignore SA1019 kube's strategy clears the legacy field too.
	c.OwnerReferences, c.Finalizers, c.SelfLink, c.ManagedFields = old.OwnerReferences, old.Finalizers, old.SelfLink, old.ManagedFields
	return apiequality.Semantic.DeepEqual(c, old)
}
