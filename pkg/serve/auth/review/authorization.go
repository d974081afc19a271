package review

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/serve/auth"
	"github.com/apictl/apictl/pkg/serve/handlers"
	"github.com/apictl/apictl/pkg/serve/request"
)

// invalidKind is what kube's access reviews name in a 422: their internal objects carry no kind, so
// the message starts `.authorization.k8s.io "" is invalid`.
var invalidKind = schema.GroupKind{Group: authorizationv1.GroupName}

// subjectAccessReview asks whether spec's user may do what spec describes.
func (r *reviews) subjectAccessReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	sar, ok := req.Object.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SubjectAccessReview: %#v", req.Object))
	}
	errs := validateSpec(&sar.Spec)
	errs = append(errs, metadataEmpty(sar.ObjectMeta, false, "must be empty")...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(invalidKind, "", errs)
	}
	sar.Status = r.decide(ctx, specUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// localSubjectAccessReview is a SubjectAccessReview confined to the namespace of its path.
func (r *reviews) localSubjectAccessReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	lsar, ok := req.Object.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a LocaLocalSubjectAccessReview: %#v", req.Object))
	}
	errs := validateSpec(&lsar.Spec)
	errs = append(errs, metadataEmpty(lsar.ObjectMeta, true, "must be empty except for namespace")...)
	if a := lsar.Spec.ResourceAttributes; a != nil && a.Namespace != lsar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), a.Namespace, "must match metadata.namespace"))
	}
	if lsar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), asInternal(lsar.Spec.NonResourceAttributes), "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(invalidKind, "", errs)
	}
	if req.Namespace == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", req.Namespace))
	}
	if req.Namespace != lsar.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", req.Namespace))
	}
	lsar.Status = r.decide(ctx, specUser(&lsar.Spec), lsar.Spec.ResourceAttributes, nil)
	return lsar, nil
}

// selfSubjectAccessReview asks whether the caller may do what spec describes.
func (r *reviews) selfSubjectAccessReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	ssar, ok := req.Object.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectAccessReview: %#v", req.Object))
	}
	errs := validateAttributes(ssar.Spec.ResourceAttributes, ssar.Spec.NonResourceAttributes)
	errs = append(errs, metadataEmpty(ssar.ObjectMeta, false, "must be empty")...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(invalidKind, "", errs)
	}
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	ssar.Status = r.decide(ctx, u, ssar.Spec.ResourceAttributes, ssar.Spec.NonResourceAttributes)
	return ssar, nil
}

// selfSubjectRulesReview lists the caller's rules in spec.namespace. As in kube, the answer is a new
// object: spec is not echoed and no managedFields are kept.
func (r *reviews) selfSubjectRulesReview(ctx context.Context, req handlers.CreateRequest) (runtime.Object, error) {
	ssrr, ok := req.Object.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectRulesReview: %#v", req.Object))
	}
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if ssrr.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	rules, err := auth.ResolveRules(ctx, r.cfg.Authorization, u, ssrr.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{
		TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: authorizationv1.SchemeGroupVersion.String()},
		Status: authorizationv1.SubjectRulesReviewStatus{
			// Never null: kube sends empty lists.
			ResourceRules:    append([]authorizationv1.ResourceRule{}, rules.Resource...),
			NonResourceRules: append([]authorizationv1.NonResourceRule{}, rules.NonResource...),
			Incomplete:       rules.Incomplete,
		},
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}

// reviewer is an authorizer that tells "no opinion" from "denied" and explains allows
// (auth.AuthorizerChain).
type reviewer interface {
	Review(ctx context.Context, u *request.User, info *request.RequestInfo) (auth.Decision, string, error)
}

// decide asks the server's authorizer about u and the attributes, as kube's access reviews do:
// allowed on Allow, denied only on an explicit Deny, the reason of the mode that decided (or of all
// when none did), and an authorizer's error as the evaluation error.
func (r *reviews) decide(ctx context.Context, u *request.User, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	info := requestInfo(res, nonRes)
	var d auth.Decision
	var reason string
	var err error
	if rv, ok := r.cfg.Authorization.(reviewer); ok {
		d, reason, err = rv.Review(ctx, u, info)
	} else if r.cfg.Authorization != nil {
		d, reason, err = r.cfg.Authorization.Authorize(ctx, u, info)
	}
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == auth.Allow, Denied: d == auth.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

// requestInfo maps a review's attributes to what the authorizers read, as kube's
// ResourceAttributesFrom does: an empty version matches every version. Field and label selectors are
// not used by any authorizer here, so they are left out.
func requestInfo(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) *request.RequestInfo {
	if res != nil {
		version := res.Version
		if version == "" {
			version = "*"
		}
		return &request.RequestInfo{
			IsResourceRequest: true, Verb: res.Verb, APIGroup: res.Group, APIVersion: version,
			Namespace: res.Namespace, Resource: res.Resource, Subresource: res.Subresource, Name: res.Name,
		}
	}
	if nonRes != nil {
		return &request.RequestInfo{Path: nonRes.Path, Verb: nonRes.Verb}
	}
	return &request.RequestInfo{}
}

// specUser is the user a SubjectAccessReview asks about, taken as it is: no group is added.
func specUser(spec *authorizationv1.SubjectAccessReviewSpec) *request.User {
	u := &request.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = make(map[string][]string, len(spec.Extra))
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}
