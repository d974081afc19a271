// Package certificatesigningrequests is the certificates.k8s.io/v1 CertificateSigningRequest kind, as
// kube-apiserver v1.37.2 serves it: its strategies for the object and its status and approval
// subresources, its validation and printer, kube's CertificateApproval, CertificateSigning and
// CertificateSubjectRestriction admission plugins, and kube-controller-manager's signing and cleaner
// controllers, which sign approved requests of kube's signers with the server's CA.
package certificatesigningrequests

import (
	"reflect"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// approval is the subresource through which a request is approved or denied.
const approval = "approval"

// Kind describes CertificateSigningRequests.
func Kind() kinds.Kind {
	spec, status := certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc(), certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()
	subVerbs := []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}
	goType := reflect.TypeFor[certificatesv1.CertificateSigningRequest]()
	return kinds.Kind{
		Group:   certificatesv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "certificatesigningrequests",
			Singular:   "certificatesigningrequest",
			Kind:       "CertificateSigningRequest",
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"csr"},
			Subresources: []model.Subresource{
				{Name: approval, Kind: "CertificateSigningRequest", Verbs: subVerbs, GoType: goType},
				{Name: "status", Kind: "CertificateSigningRequest", Verbs: subVerbs, GoType: goType},
			},
			// kube's field label conversion for CSRs (pkg/apis/certificates/v1/conversion.go).
			SelectableFields: []string{"spec.signerName"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.AgeColumn(),
				model.ComputedColumn("SignerName", spec["signerName"], 0),
				model.ComputedColumn("Requestor", spec["request"], 0),
				model.ComputedColumn("RequestedDuration", spec["expirationSeconds"], 0),
				model.ComputedColumn("Condition", status["conditions"], 0),
			},
			GoType:     goType,
			ListGoType: reflect.TypeFor[certificatesv1.CertificateSigningRequestList](),
		},
		// kube does not care what certificate requests are called (ValidateCertificateRequestName);
		// the store's key needs a path segment.
		NameRule: pathSegmentName,
		Strategy: strategy{now: time.Now},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(), printers.AgeColumn(),
				printers.Column("SignerName", spec["signerName"]),
				printers.Column("Requestor", spec["request"]),
				printers.Column("RequestedDuration", spec["expirationSeconds"]),
				printers.Column("Condition", status["conditions"]),
			},
			Cells: printers.Typed(cells),
		},
		Admission: []kinds.Admission{
			{Name: "CertificateApproval", Validate: admitApproval},
			{Name: "CertificateSigning", Validate: admitSigning},
			{Name: "CertificateSubjectRestriction", Validate: admitSubject},
		},
		Controllers: []kinds.Controller{
			{Name: SigningControllerName, New: newSigningController},
			{Name: CleanerControllerName, New: newCleaner},
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/certificates/certificates/strategy.go", Version: "v1.37.2", Parts: "csrStrategy, csrStatusStrategy, csrApprovalStrategy"},
			{Path: "pkg/apis/certificates/validation/validation.go", Version: "v1.37.2", Parts: "the CertificateSigningRequest validation (validation.go)"},
			{Path: "pkg/apis/core/validation/names.go", Version: "v1.37.2", Parts: "ValidateSignerName (pkg/kinds/validation)"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printCertificateSigningRequest, extractCSRStatus"},
			{Path: "plugin/pkg/admission/certificates/approval/admission.go", Version: "v1.37.2", Parts: "CertificateApproval (admission.go)"},
			{Path: "plugin/pkg/admission/certificates/signing/admission.go", Version: "v1.37.2", Parts: "CertificateSigning (admission.go)"},
			{Path: "plugin/pkg/admission/certificates/subjectrestriction/admission.go", Version: "v1.37.2", Parts: "CertificateSubjectRestriction (admission.go)"},
			{Path: "pkg/certauthorization/certauthorization.go", Version: "v1.37.2", Parts: "IsAuthorizedForSignerName (admission.go)"},
			{Path: "pkg/controller/certificates/signer/signer.go", Version: "v1.37.2", Parts: "the signers' checks and durations (signer.go)"},
			{Path: "pkg/controller/certificates/authority/policies.go", Version: "v1.37.2", Parts: "keyUsagesFromStrings, backdating (signer.go)"},
			{Path: "pkg/controller/certificates/certificate_controller_utils.go", Version: "v1.37.2", Parts: "GetCertApprovalCondition, IsCertificateRequestApproved (signer.go)"},
			{Path: "pkg/controller/certificates/cleaner/cleaner.go", Version: "v1.37.2", Parts: "the cleaner's expiries (cleaner.go)"},
		},
	}
}

// cells are printCertificateSigningRequest's.
func cells(csr *certificatesv1.CertificateSigningRequest, now time.Time) []any {
	signer := "<none>"
	if csr.Spec.SignerName != "" {
		signer = csr.Spec.SignerName
	}
	requested := "<none>"
	if csr.Spec.ExpirationSeconds != nil {
		requested = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
	}
	return []any{csr.Name, printers.Age(csr.CreationTimestamp, now), signer, csr.Spec.Username, requested, conditionCell(csr)}
}

// conditionCell is extractCSRStatus: Denied, Approved or Pending, then Failed and Issued.
func conditionCell(csr *certificatesv1.CertificateSigningRequest) string {
	var status string
	switch {
	case hasCondition(csr, certificatesv1.CertificateDenied):
		status = "Denied"
	case hasCondition(csr, certificatesv1.CertificateApproved):
		status = "Approved"
	default:
		status = "Pending"
	}
	if hasCondition(csr, certificatesv1.CertificateFailed) {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

// strategy is kube's csrStrategy with its status and approval strategies. now stamps the
// conditions' times.
type strategy struct{ now func() time.Time }

var (
	_ kinds.Requester           = strategy{}
	_ kinds.StatusStrategy      = strategy{}
	_ kinds.SubresourceStrategy = strategy{}
)

// PrepareForCreate clears who asked (PrepareForCreateBy sets it from the request) and the status: a
// request is never created approved.
func (strategy) PrepareForCreate(obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// PrepareForCreateBy records the requesting user in the spec.
func (strategy) PrepareForCreateBy(obj runtime.Object, u user.Info) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
	if extra := u.GetExtra(); len(extra) > 0 {
		csr.Spec.Extra = make(map[string]certificatesv1.ExtraValue, len(extra))
		for k, v := range extra {
			csr.Spec.Extra[k] = slices.Clone(v)
		}
	}
}

// PrepareForUpdate keeps spec and status: only metadata changes through the main resource.
func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateCreate(obj.(*certificatesv1.CertificateSigningRequest))
}

func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	return validateUpdate(csr, oldCSR, optionsFor(csr, oldCSR))
}

// PrepareForStatusUpdate is csrStatusStrategy's: the spec stays, the Approved and Denied conditions
// stay as they were (adding or removing one fails validation), and new conditions get their times.
// Metadata is the client's, as in kube.
func (s strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	preserveConditionInstances(csr, oldCSR, certificatesv1.CertificateApproved)
	preserveConditionInstances(csr, oldCSR, certificatesv1.CertificateDenied)
	s.populateConditionTimestamps(csr, oldCSR)
	return csr
}

func (strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := optionsFor(csr, oldCSR)
	opts.allowSettingCertificate = true
	return validateUpdate(csr, oldCSR, opts)
}

func (strategy) WritesSubresource(sub string) bool { return sub == approval }

// PrepareForSubresourceUpdate is csrApprovalStrategy's: only the conditions change, stamped with
// their times.
func (s strategy) PrepareForSubresourceUpdate(_ string, obj, old runtime.Object) runtime.Object {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	s.populateConditionTimestamps(csr, oldCSR)
	conditions := csr.Status.Conditions
	csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
	csr.Status.Conditions = conditions
	return csr
}

func (strategy) ValidateSubresourceUpdate(_ string, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := optionsFor(csr, oldCSR)
	opts.allowSettingApprovalConditions = true
	return validateUpdate(csr, oldCSR, opts)
}

// preserveConditionInstances puts back the stored conditions of type t when the write has as many of
// them; otherwise validation refuses the write.
func preserveConditionInstances(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// populateConditionTimestamps sets a condition's missing lastUpdateTime to now and its missing
// lastTransitionTime to that of the stored condition of the same type and status, or now.
func (s strategy) populateConditionTimestamps(csr, old *certificatesv1.CertificateSigningRequest) {
	now := metav1.NewTime(s.now())
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}
