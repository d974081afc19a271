// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/admissionregistration/validation/validation.go
// (ValidateValidatingAdmissionPolicy and what it calls).

package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/client-go/util/jsonpath"
)

// The validation of admission policies and their bindings, as kube's
// k8s.io/kubernetes/pkg/apis/admissionregistration/validation writes it, on the v1 types.
// Left out, because they need the requesting user: kube also authorizes a policy's paramKind and a
// binding's paramRef (the user must be allowed to read the param resource) once the object is
// otherwise valid.

const (
	maxAuditAnnotations = 20
	// maxAuditAnnotationValueExpressionLength keeps an expression within half the 10 KiB an audit
	// annotation's value may have.
	maxAuditAnnotationValueExpressionLength = 5 * 1024
)

var (
	validValidationActions = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))
	supportedPolicyReasons = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))
	supportedPatchTypes    = sets.New(string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch))
	newlines               = regexp.MustCompile(`[\n\r]+`)
)

// policyOptions: an update skips match conditions when neither they nor paramKind changed, and
// compiles the stored object's expressions in the stored-expressions environment.
type policyOptions struct {
	ignoreMatchConditions bool
	preexisting           policyExpressions
}

// policyExpressions are a stored policy's expressions, by where they appear.
type policyExpressions struct {
	matchConditions, validations, messages, auditAnnotations, applyConfigurations sets.Set[string]
}

func validatingPolicyExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) policyExpressions {
	e := policyExpressions{sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()}
	for _, mc := range p.Spec.MatchConditions {
		e.matchConditions.Insert(mc.Expression)
	}
	for _, v := range p.Spec.Validations {
		e.validations.Insert(v.Expression)
		if v.MessageExpression != "" {
			e.messages.Insert(v.MessageExpression)
		}
	}
	for _, a := range p.Spec.AuditAnnotations {
		e.auditAnnotations.Insert(a.ValueExpression)
	}
	return e
}

// mutatingPolicyExpressions: kube looks a JSON patch expression up among the stored apply
// configuration expressions (not the stored JSON patch ones), so only those are collected.
func mutatingPolicyExpressions(p *admissionregistrationv1.MutatingAdmissionPolicy) policyExpressions {
	e := policyExpressions{sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()}
	for _, mc := range p.Spec.MatchConditions {
		e.matchConditions.Insert(mc.Expression)
	}
	for _, m := range p.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			e.applyConfigurations.Insert(m.ApplyConfiguration.Expression)
		}
	}
	return e
}

func (c *celCompilers) validateValidatingPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy, opts policyOptions) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec, fld := &p.Spec, field.NewPath("spec")
	var compiler plugincel.Compiler
	getCompiler := func() plugincel.Compiler {
		if compiler == nil {
			compiler = c.compiler(len(spec.Variables) > 0)
		}
		return compiler
	}
	errs = append(errs, validateFailurePolicy(spec.FailurePolicy, fld.Child("failurePolicy"))...)
	mcOpts := matchConditionOptions{preexisting: opts.preexisting.matchConditions}
	if spec.ParamKind != nil {
		mcOpts.allowParams = true
		errs = append(errs, validateParamKind(*spec.ParamKind, fld.Child("paramKind"))...)
	}
	errs = append(errs, validateMatchConstraints(spec.MatchConstraints, fld.Child("matchConstraints"))...)
	if !opts.ignoreMatchConditions {
		errs = append(errs, c.validateMatchConditions(spec.MatchConditions, mcOpts, fld.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, validateVariable(getCompiler(), &spec.Variables[i], spec.ParamKind != nil, opts.preexisting.validations, fld.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(fld.Child("validations"), msg), field.Required(fld.Child("auditAnnotations"), msg))
	}
	for i := range spec.Validations {
		errs = append(errs, validateValidation(getCompiler(), &spec.Validations[i], spec.ParamKind != nil, opts.preexisting, fld.Child("validations").Index(i))...)
	}
	if spec.AuditAnnotations != nil {
		if len(spec.AuditAnnotations) > maxAuditAnnotations {
			errs = append(errs, field.Invalid(fld.Child("auditAnnotations"), spec.AuditAnnotations, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
		}
		keys := sets.New[string]()
		for i := range spec.AuditAnnotations {
			a := &spec.AuditAnnotations[i]
			f := fld.Child("auditAnnotations").Index(i)
			errs = append(errs, validateAuditAnnotation(getCompiler(), p.Name, a, spec.ParamKind != nil, opts.preexisting.auditAnnotations, f)...)
			if keys.Has(a.Key) {
				errs = append(errs, field.Duplicate(f.Child("key"), a.Key))
			}
			keys.Insert(a.Key)
		}
	}
	return errs
}

func validateFailurePolicy(p *admissionregistrationv1.FailurePolicyType, fld *field.Path) field.ErrorList {
	if p == nil {
		return field.ErrorList{field.Required(fld, "")}
	}
	if !supportedFailurePolicies.Has(string(*p)) {
		return field.ErrorList{field.NotSupported(fld, *p, sets.List(supportedFailurePolicies))}
	}
	return nil
}

// validateMatchConstraints: a policy needs matchConstraints with at least one resource rule, which
// gives its expressions their type information.
func validateMatchConstraints(m *admissionregistrationv1.MatchResources, fld *field.Path) field.ErrorList {
	if m == nil {
		return field.ErrorList{field.Required(fld, "")}
	}
	errs := validateMatchResources(m, fld)
	if len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(fld.Child("resourceRules"), ""))
	}
	return errs
}

// validateParamKind checks apiVersion as an APIService checks group and version, and the kind as a
// DNS-1035 label in any case.
func validateParamKind(pk admissionregistrationv1.ParamKind, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(fld.Child("apiVersion"), ""))
	} else if group, version, err := parseGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(fld.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else {
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(fld.Child("apiVersion"), group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(fld.Child("apiVersion"), pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("apiVersion"), version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(fld.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(fld.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// parseGroupVersion splits "group/version" as kube's validation does ("v1" is the core group).
func parseGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}

// validateMatchResources checks a policy's or a binding's match resources; the selectors strictly
// (the type came after kube started refusing invalid label values in selectors).
func validateMatchResources(m *admissionregistrationv1.MatchResources, fld *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(fld.Child("matchPolicy"), ""))
	} else if !supportedMatchPolicies.Has(string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("matchPolicy"), *m.MatchPolicy, sets.List(supportedMatchPolicies)))
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(fld.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(fld.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], fld.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], fld.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(n *admissionregistrationv1.NamedRuleWithOperations, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, name := range n.ResourceNames {
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(fld.Child("resourceNames").Index(i), name, msg))
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(fld.Child("resourceNames").Index(i), name))
		}
		names.Insert(name)
	}
	return append(errs, validateRuleWithOperations(&n.RuleWithOperations, fld)...)
}

func validateVariable(compiler plugincel.Compiler, v *admissionregistrationv1.Variable, hasParams bool, preexisting sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, field.Required(fld.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(v.Name) {
		errs = append(errs, field.Invalid(fld.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		return append(errs, field.Required(fld.Child("expression"), "expression is not specified"))
	}
	composited, ok := compiler.(*plugincel.CompositedCompiler)
	if !ok {
		return append(errs, field.InternalError(fld, fmt.Errorf("variable composition is not allowed")))
	}
	variable := &validatingpolicy.Variable{Name: v.Name, Expression: v.Expression}
	// kube looks a variable's expression up among the stored validation expressions.
	result := composited.CompileAndStoreVariable(variable, plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true},
		envType(preexisting, v.Expression))
	if result.Error != nil {
		errs = append(errs, compileErr(fld.Child("expression"), v.Expression, result.Error))
	}
	return errs
}

// validateValidation checks one validation: its expression, message expression (which may not use
// the authorizer), message and reason.
func validateValidation(compiler plugincel.Compiler, v *admissionregistrationv1.Validation, hasParams bool, preexisting policyExpressions, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	trimmedMsg := strings.TrimSpace(v.Message)
	trimmedMessageExpression := strings.TrimSpace(v.MessageExpression)
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(fld.Child("expression"), "expression is not specified"))
	} else {
		errs = append(errs, compile(compiler, &validatingpolicy.ValidationCondition{Expression: v.Expression},
			plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true},
			envType(preexisting.validations, v.Expression), fld.Child("expression"))...)
	}
	if v.MessageExpression != "" && trimmedMessageExpression == "" {
		errs = append(errs, field.Invalid(fld.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if trimmedMessageExpression != "" {
		// The untrimmed expression, so that the compiler's column numbers are right.
		errs = append(errs, compile(compiler, &validatingpolicy.MessageExpressionCondition{MessageExpression: v.MessageExpression},
			plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false},
			envType(preexisting.messages, v.MessageExpression), fld.Child("messageExpression"))...)
	}
	if v.Message != "" && trimmedMsg == "" {
		errs = append(errs, field.Invalid(fld.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlines.MatchString(trimmedMsg) {
		errs = append(errs, field.Invalid(fld.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !supportedPolicyReasons.Has(string(*v.Reason)) {
		errs = append(errs, field.NotSupported(fld.Child("reason"), *v.Reason, sets.List(supportedPolicyReasons)))
	}
	return errs
}

// validateAuditAnnotation: the key, prefixed with the policy's name, must be a qualified name; the
// value expression must compile and stay within 5 KiB.
func validateAuditAnnotation(compiler plugincel.Compiler, policyName string, a *admissionregistrationv1.AuditAnnotation, hasParams bool, preexisting sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policyName != "" {
		errs = append(errs, validateQualifiedName(policyName+"/"+a.Key, fld.Child("key"))...)
	} else {
		errs = append(errs, field.Invalid(fld.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	trimmed := strings.TrimSpace(a.ValueExpression)
	switch {
	case trimmed == "":
		errs = append(errs, field.Required(fld.Child("valueExpression"), "valueExpression is not specified"))
	case len(trimmed) > maxAuditAnnotationValueExpressionLength:
		errs = append(errs, field.Required(fld.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
	default:
		result := compiler.CompileCELExpression(&validatingpolicy.AuditAnnotationCondition{ValueExpression: trimmed},
			plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}, envType(preexisting, a.ValueExpression))
		if result.Error != nil {
			// The untrimmed expression is the invalid value, as kube reports it.
			errs = append(errs, compileErr(fld.Child("valueExpression"), a.ValueExpression, result.Error))
		}
	}
	return errs
}

// validateValidatingPolicyStatus checks the type checker's warnings and the conditions.
func validateValidatingPolicyStatus(status *admissionregistrationv1.ValidatingAdmissionPolicyStatus, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if tc := status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			f := fld.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(f.Child("warning"), ""))
			}
			errs = append(errs, validateFieldRef(w.FieldRef, f.Child("fieldRef"))...)
		}
	}
	return append(errs, metav1validation.ValidateConditions(status.Conditions, fld.Child("conditions"))...)
}

// validateFieldRef requires a JSONPath that parses; nothing more, for easier upgrades.
func validateFieldRef(fieldRef string, fld *field.Path) field.ErrorList {
	fieldRef = strings.TrimSpace(fieldRef)
	if fieldRef == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", fieldRef)); err != nil {
		return field.ErrorList{field.Invalid(fld, fieldRef, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}

func (c *celCompilers) validateMutatingPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy, opts policyOptions) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec, fld := &p.Spec, field.NewPath("spec")
	compiler := c.compiler(true)
	errs = append(errs, validateFailurePolicy(spec.FailurePolicy, fld.Child("failurePolicy"))...)
	mcOpts := matchConditionOptions{preexisting: opts.preexisting.matchConditions}
	if spec.ParamKind != nil {
		mcOpts.allowParams = true
		errs = append(errs, validateParamKind(*spec.ParamKind, fld.Child("paramKind"))...)
	}
	errs = append(errs, validateMatchConstraints(spec.MatchConstraints, fld.Child("matchConstraints"))...)
	if spec.MatchConstraints != nil {
		errs = append(errs, mutatingOperations(spec.MatchConstraints.ResourceRules, fld.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	if !opts.ignoreMatchConditions {
		errs = append(errs, c.validateMatchConditions(spec.MatchConditions, mcOpts, fld.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, validateVariable(compiler, &spec.Variables[i], spec.ParamKind != nil, opts.preexisting.validations, fld.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(fld.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, validateMutation(compiler, &spec.Mutations[i], spec.ParamKind != nil, opts.preexisting.applyConfigurations, fld.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(fld.Child("reinvocationPolicy"), ""))
	} else if !supportedReinvocationPolicies.Has(string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(fld.Child("reinvocationPolicy"), spec.ReinvocationPolicy, sets.List(supportedReinvocationPolicies)))
	}
	return errs
}

// mutatingOperations refuses DELETE in the rules of mutating policies and their bindings. kube
// reports it at the path of the operations without indexes.
func mutatingOperations(rules []admissionregistrationv1.NamedRuleWithOperations, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range rules {
		for _, op := range r.Operations {
			if !supportedMutatingOperations.Has(string(op)) {
				errs = append(errs, field.NotSupported(fld, op, sets.List(supportedMutatingOperations)))
			}
		}
	}
	return errs
}

// validateMutation requires the patch type's own field, and only it, with an expression that
// compiles with the patch types declared.
func validateMutation(compiler plugincel.Compiler, m *admissionregistrationv1.Mutation, hasParams bool, preexisting sets.Set[string], fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true, HasPatchTypes: true}
	compileExpr := func(expression string, accessor func(string) plugincel.ExpressionAccessor, f *field.Path) field.ErrorList {
		trimmed := strings.TrimSpace(expression)
		if trimmed == "" {
			return field.ErrorList{field.Required(f.Child("expression"), "")}
		}
		return compile(compiler, accessor(trimmed), decls, envType(preexisting, expression), f.Child("expression"))
	}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(fld.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(fld.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, compileExpr(m.JSONPatch.Expression, func(e string) plugincel.ExpressionAccessor {
				return &patch.JSONPatchCondition{Expression: e}
			}, fld.Child("jsonPatch"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(fld.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(fld.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, compileExpr(m.ApplyConfiguration.Expression, func(e string) plugincel.ExpressionAccessor {
				return &patch.ApplyConfigurationCondition{Expression: e}
			}, fld.Child("applyConfiguration"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(fld.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(fld.Child("patchType"), m.PatchType, sets.List(supportedPatchTypes)))
	}
	return errs
}
