package resourcequotas

// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go
// (ValidateResourceQuota, ValidateResourceQuotaUpdate, ValidateResourceQuotaStatusUpdate and what
// they call) and pkg/apis/core/helper/helpers.go (the quota resource names and scopes). The object
// metadata checks are the generic store's (pkg/registry).

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube's messages.
const (
	isInvalidQuotaResource = "must be a standard resource for quota"
	isNotIntegerErrorMsg   = "must be an integer"
	isNegativeErrorMsg     = apimachineryvalidation.IsNegativeErrorMsg
	fieldImmutableErrorMsg = "field is immutable"
)

func validateSpec(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	errs := validateResourceList(spec.Hard, fld.Child("hard"))
	errs = append(errs, validateScopes(spec, fld)...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(spec, fld.Child("scopeSelector"))...)
	}
	return errs
}

func validateStatus(status *corev1.ResourceQuotaStatus, fld *field.Path) field.ErrorList {
	errs := validateResourceList(status.Hard, fld.Child("hard"))
	return append(errs, validateResourceList(status.Used, fld.Child("used"))...)
}

// validateResourceList checks each name and quantity of a quota's list. kube ranges over the map, in
// Go's random order; apictl goes by name, one of kube's orders, so that an answer does not change
// between two identical requests.
func validateResourceList(list corev1.ResourceList, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(list)) {
		v := list[k]
		p := fld.Key(string(k))
		errs = append(errs, validateQuotaResourceName(k, p)...)
		errs = append(errs, validateQuantityValue(k, v, p)...)
	}
	return errs
}

// validateUpdate is ValidateResourceQuotaUpdate but its metadata part: the spec must be valid and
// the scopes cannot change.
func validateUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := validateSpec(&q.Spec, field.NewPath("spec"))
	if !sets.New(q.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, fieldImmutableErrorMsg))
	}
	return errs
}

// validateStatusUpdate is ValidateResourceQuotaStatusUpdate but its metadata part.
func validateStatusUpdate(q *corev1.ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	if q.ResourceVersion == "" {
		errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	return append(errs, validateStatus(&q.Status, field.NewPath("status"))...)
}

// validateQuotaResourceName is ValidateResourceQuotaResourceName.
func validateQuotaResourceName(name corev1.ResourceName, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(fld, name, msg))
	}
	if strings.Contains(string(name), "/") {
		return errs
	}
	// validateResourceName's check (only of a qualified name), then the quota's own: an unknown
	// name gets both messages.
	if len(errs) == 0 && !standardResources.Has(name) && !isQuotaHugePageResourceName(name) {
		errs = append(errs, field.Invalid(fld, name, "must be a standard resource type or fully qualified"))
	}
	if !isStandardQuotaResourceName(name) {
		errs = append(errs, field.Invalid(fld, name, isInvalidQuotaResource))
	}
	return errs
}

// validateQuantityValue is ValidateResourceQuantityValue.
func validateQuantityValue(name corev1.ResourceName, value resource.Quantity, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if value.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(fld, value.String(), isNegativeErrorMsg))
	}
	if isIntegerResourceName(name) && value.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(fld, value, isNotIntegerErrorMsg))
	}
	return errs
}

// validateScopes is validateResourceQuotaScopes.
func validateScopes(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	hard := sets.KeySet(spec.Hard)
	p := fld.Child("scopes")
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, scope := range spec.Scopes {
		if !isStandardScope(scope) {
			errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope"))
		}
		for _, k := range sets.List(hard) {
			if isStandardQuotaResourceName(k) && !scopeValidForResource(scope, k) {
				errs = append(errs, field.Invalid(p, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		seen.Insert(scope)
	}
	if conflicting(seen) {
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

// validateScopeSelector is validateScopedResourceSelectorRequirement.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	hard := sets.KeySet(spec.Hard)
	p := fld.Child("matchExpressions")
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !isStandardScope(req.ScopeName) {
			errs = append(errs, field.Invalid(p.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, k := range sets.List(hard) {
			if isStandardQuotaResourceName(k) && !scopeValidForResource(req.ScopeName, k) {
				errs = append(errs, field.Invalid(p, internalSelector(spec.ScopeSelector), "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				errs = append(errs, field.Invalid(p.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"),
					"must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(p.Child("values"), req.Values,
					"must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		seen.Insert(req.ScopeName)
	}
	if conflicting(seen) {
		// kube reports the scopes field here too, not the selector.
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

// conflicting reports scopes that exclude each other.
func conflicting(scopes sets.Set[corev1.ResourceQuotaScope]) bool {
	return scopes.HasAll(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort) ||
		scopes.HasAll(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating)
}

// The sets of pkg/apis/core/helper.
var (
	standardScopes = sets.New(
		corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeVolumeAttributesClass,
	)
	podObjectCountResources = sets.New(corev1.ResourcePods)
	podComputeResources     = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	)
	pvcObjectCountResources = sets.New(corev1.ResourcePersistentVolumeClaims)
	pvcStorageResources     = sets.New(corev1.ResourceRequestsStorage)
	standardQuotaResources  = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
		corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
		corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceConfigMaps, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	standardResources = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage, corev1.ResourceServicesNodePorts,
		corev1.ResourceServicesLoadBalancers,
	)
	integerResources = sets.New(
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
)

func isStandardScope(scope corev1.ResourceQuotaScope) bool {
	return standardScopes.Has(scope) || scope == corev1.ResourceQuotaScopeCrossNamespacePodAffinity
}

// scopeValidForResource is IsResourceQuotaScopeValidForResource.
func scopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podObjectCountResources.Has(name) || podComputeResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return podObjectCountResources.Has(name)
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return pvcObjectCountResources.Has(name) || pvcStorageResources.Has(name)
	default:
		return true
	}
}

func isStandardQuotaResourceName(name corev1.ResourceName) bool {
	return standardQuotaResources.Has(name) || isQuotaHugePageResourceName(name)
}

func isQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isIntegerResourceName is IsIntegerResourceName: the object counts and extended resources.
func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResourceName(name)
}

// isExtendedResourceName is IsExtendedResourceName: outside kubernetes.io, not requests.*, and a
// qualified name once prefixed with requests.
func isExtendedResourceName(name corev1.ResourceName) bool {
	native := !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
	if native || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(utilvalidation.IsQualifiedName(fmt.Sprintf("%s%s", corev1.DefaultResourceRequestsPrefix, name))) == 0
}

// internalSelector is a scope selector as kube's message shows it: kube validates its internal
// type, which has no JSON tags, so the value prints with Go's field names.
func internalSelector(sel *corev1.ScopeSelector) any {
	type requirement struct {
		ScopeName corev1.ResourceQuotaScope
		Operator  corev1.ScopeSelectorOperator
		Values    []string
	}
	out := struct{ MatchExpressions []requirement }{}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, requirement{r.ScopeName, r.Operator, r.Values})
	}
	return out
}
