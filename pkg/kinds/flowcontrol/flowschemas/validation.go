package flowschemas

// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/flowcontrol/validation/validation.go: ValidateFlowSchema
// and the functions it calls, on the v1 types (kube validates its internal types, which have the same
// fields). The metadata and the name are checked by the generic rules before these run.

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/apictl/apictl/pkg/kinds/validation"
)

var (
	supportedDistinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedVerbs                = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	supportedSubjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
)

// nsErrIntro heads each error about a namespace of a resource rule.
const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

func validate(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateSpec(fs.Name, &fs.Spec, specPath)
	if mand, ok := mandatory(fs.Name); ok && !apiequality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
		errs = append(errs, field.Invalid(specPath, validation.InternalJSON(fs.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return append(errs, validateStatus(&fs.Status, field.NewPath("status"))...)
}

// mandatory returns the defaulted mandatory FlowSchema of that name: kube compares with its internal
// copy, which decoding has defaulted.
func mandatory(name string) (*flowcontrolv1.FlowSchema, bool) {
	for _, m := range bootstrap.MandatoryFlowSchemas {
		if m.Name == name {
			out := m.DeepCopy()
			SetDefaults(out)
			return out, true
		}
	}
	return nil, false
}

func validateSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(fld.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(fld.Child("matchingPrecedence"), spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(fld.Child("matchingPrecedence"), spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if spec.DistinguisherMethod != nil && !slices.Contains(supportedDistinguisherMethods, string(spec.DistinguisherMethod.Type)) {
		errs = append(errs, field.NotSupported(fld.Child("distinguisherMethod").Child("type"), validation.InternalJSON(spec.DistinguisherMethod), supportedDistinguisherMethods))
	}
	plPath := fld.Child("priorityLevelConfiguration").Child("name")
	if pl := spec.PriorityLevelConfiguration.Name; pl != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(pl, false) {
			errs = append(errs, field.Invalid(plPath, pl, msg))
		}
	} else {
		errs = append(errs, field.Required(plPath, "must reference a priority level"))
	}
	for i := range spec.Rules {
		errs = append(errs, validateRule(&spec.Rules[i], fld.Child("rules").Index(i))...)
	}
	return errs
}

func validateRule(rule *flowcontrolv1.PolicyRulesWithSubjects, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(fld.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, validateSubject(&rule.Subjects[i], fld.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(fld, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, validateResourceRule(&rule.ResourceRules[i], fld.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&rule.NonResourceRules[i], fld.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

// validateSubject is ValidateFlowSchemaSubject: the member the kind names is required, the others are
// forbidden.
func validateSubject(s *flowcontrolv1.Subject, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbidUser := func() {
		if s.User != nil {
			errs = append(errs, field.Forbidden(fld.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
	}
	forbidGroup := func() {
		if s.Group != nil {
			errs = append(errs, field.Forbidden(fld.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	}
	forbidSA := func() {
		if s.ServiceAccount != nil {
			errs = append(errs, field.Forbidden(fld.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, fld.Child("serviceAccount"))...)
		forbidUser()
		forbidGroup()
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(fld.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(fld.Child("user").Child("name"), ""))
		}
		forbidSA()
		forbidGroup()
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(fld.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(fld.Child("group").Child("name"), ""))
		}
		forbidSA()
		forbidUser()
	default:
		errs = append(errs, field.NotSupported(fld.Child("kind"), s.Kind, supportedSubjectKinds))
	}
	return errs
}

func validateServiceAccountSubject(s *flowcontrolv1.ServiceAccountSubject, fld *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(fld, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(fld.Child("name"), ""))
	} else if s.Name != flowcontrolv1.NameAll {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.Name, false) {
			errs = append(errs, field.Invalid(fld.Child("name"), s.Name, msg))
		}
	}
	if s.Namespace == "" {
		return append(errs, field.Required(fld.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apimachineryvalidation.ValidateNamespaceName(s.Namespace, false) {
		errs = append(errs, field.Invalid(fld.Child("namespace"), s.Namespace, msg))
	}
	return errs
}

// validateVerbs checks the verbs of a resource or non-resource rule.
func validateVerbs(verbs []string, fld *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(fld, "verbs must contain at least one value")}
	case slices.Contains(verbs, flowcontrolv1.VerbAll):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(fld, verbs, "if '*' is present, must not specify other verbs")}
		}
	case !sets.New(supportedVerbs...).HasAll(verbs...):
		return field.ErrorList{field.NotSupported(fld, verbs, supportedVerbs)}
	}
	return nil
}

func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, fld *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, fld.Child("verbs"))
	urls := fld.Child("nonResourceURLs")
	switch {
	case len(rule.NonResourceURLs) == 0:
		errs = append(errs, field.Required(urls, "nonResourceURLs must contain at least one value"))
	case slices.Contains(rule.NonResourceURLs, flowcontrolv1.NonResourceAll):
		if len(rule.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(urls, rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range rule.NonResourceURLs {
			if err := validateNonResourceURLPath(u, urls.Index(i)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, fld *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, fld.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(fld.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, flowcontrolv1.APIGroupAll) {
		errs = append(errs, field.Invalid(fld.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(fld.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && slices.Contains(rule.Resources, flowcontrolv1.ResourceAll) {
		errs = append(errs, field.Invalid(fld.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	ns := fld.Child("namespaces")
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		errs = append(errs, field.Required(ns, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, flowcontrolv1.NamespaceEvery):
		if len(rule.Namespaces) > 1 {
			errs = append(errs, field.Invalid(ns, rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, n := range rule.Namespaces {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(n, false) {
				errs = append(errs, field.Invalid(ns.Index(i), n, nsErrIntro+msg))
			}
		}
	}
	return errs
}

// validateNonResourceURLPath is ValidateNonResourceURLPath: a path that starts with a slash, without
// white-space or a double slash, whose only wildcard is a final "/*".
func validateNonResourceURLPath(path string, fld *field.Path) *field.Error {
	switch {
	case path == "":
		return field.Invalid(fld, path, "must not be empty")
	case path == "/":
		return nil
	case !strings.HasPrefix(path, "/"):
		return field.Invalid(fld, path, "must start with slash")
	case strings.Contains(path, " "):
		return field.Invalid(fld, path, "must not contain white-space")
	case strings.Contains(path, "//"):
		return field.Invalid(fld, path, "must not contain double slash")
	}
	if n := strings.Count(path, "*"); n > 1 || n == 1 && !strings.HasSuffix(path, "/*") {
		return field.Invalid(fld, path, "wildcard can only do suffix matching")
	}
	return nil
}

// validateStatus is ValidateFlowSchemaStatus.
func validateStatus(status *flowcontrolv1.FlowSchemaStatus, fld *field.Path) field.ErrorList {
	return validation.ConditionTypes(status.Conditions, func(c flowcontrolv1.FlowSchemaCondition) flowcontrolv1.FlowSchemaConditionType { return c.Type }, fld)
}
