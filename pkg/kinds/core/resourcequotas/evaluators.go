package resourcequotas

// Ported from k8s.io/kubernetes v1.37.2 pkg/quota/v1/evaluator/core/services.go (the services
// evaluator), pkg/quota/v1/evaluator/core/registry.go (NewEvaluators' legacy object count aliases),
// pkg/quota/v1/install/registry.go (the ignored resources) and pkg/quota/v1/install/update_filter.go
// (DefaultUpdateFilter, the services case). Pods, PersistentVolumeClaims and ResourceClaims have
// evaluators in kube that apictl, which serves none of them, has no use for.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

// Served reports whether the server serves a resource.
type Served func(schema.GroupVersionResource) bool

// Configuration is the quota configuration of admission and of the controller, as kube's
// NewQuotaConfigurationForAdmission and NewQuotaConfigurationForControllers build it: the services
// evaluator and the object counts with a legacy alias (configmaps, resourcequotas,
// replicationcontrollers, secrets), for the resources the server serves, and kube's ignored
// resources. Every other resource gets a plain count/<resource>.<group> evaluator where it is
// needed (admission's quota evaluator and the controller's monitor add them). lister lists a
// resource's objects for the controller's usage; admission, which never lists, passes nil.
func Configuration(served Served, lister quota.ListerForResourceFunc) quota.Configuration {
	var evaluators []quota.Evaluator
	services := corev1.SchemeGroupVersion.WithResource("services")
	if served(services) {
		evaluators = append(evaluators, newServiceEvaluator(lister))
	}
	for _, alias := range []struct {
		resource string
		name     corev1.ResourceName
	}{
		{"configmaps", corev1.ResourceConfigMaps},
		{"resourcequotas", corev1.ResourceQuotas},
		{"replicationcontrollers", corev1.ResourceReplicationControllers},
		{"secrets", corev1.ResourceSecrets},
	} {
		gvr := corev1.SchemeGroupVersion.WithResource(alias.resource)
		if served(gvr) {
			evaluators = append(evaluators, generic.NewObjectCountEvaluator(gvr.GroupResource(),
				generic.ListResourceUsingListerFunc(lister, gvr), alias.name))
		}
	}
	return generic.NewConfiguration(evaluators, ignoredResources())
}

// ignoredResources are kube's DefaultIgnoredResources: virtual resources that are not stored, and
// events, which quota has never counted.
func ignoredResources() map[schema.GroupResource]struct{} {
	return map[schema.GroupResource]struct{}{
		{Group: "", Resource: "bindings"}:                                      {},
		{Group: "", Resource: "componentstatuses"}:                             {},
		{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {},
		{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {},
		{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {},
		{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {},
		{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {},
		{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {},
		{Group: "", Resource: "events"}:                                        {},
		{Group: "events.k8s.io", Resource: "events"}:                           {},
	}
}

// updateFilter is kube's DefaultUpdateFilter for what apictl serves: an update changes usage only
// when a service changes between quota service types.
func updateFilter(gvr schema.GroupVersionResource, oldObj, newObj any) bool {
	if gvr.GroupResource() != (schema.GroupResource{Resource: "services"}) {
		return false
	}
	oldSvc, err1 := toService(oldObj)
	newSvc, err2 := toService(newObj)
	return err1 == nil && err2 == nil && quotaServiceType(oldSvc) != quotaServiceType(newSvc)
}

// quotaServiceType is GetQuotaServiceType: the service types quota counts, else "".
func quotaServiceType(svc *corev1.Service) corev1.ServiceType {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return svc.Spec.Type
	}
	return ""
}

var servicesResource = corev1.SchemeGroupVersion.WithResource("services")

// serviceResources are the quota resources of services.
var serviceResources = []corev1.ResourceName{
	generic.ObjectCountQuotaResourceNameFor(servicesResource.GroupResource()),
	corev1.ResourceServices,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
}

// serviceEvaluator is kube's: services count, and so do their node ports and load balancers.
type serviceEvaluator struct {
	list generic.ListFuncByNamespace
}

var _ quota.Evaluator = (*serviceEvaluator)(nil)

func newServiceEvaluator(lister quota.ListerForResourceFunc) *serviceEvaluator {
	return &serviceEvaluator{list: generic.ListResourceUsingListerFunc(lister, servicesResource)}
}

// Constraints is a no-op for services.
func (*serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (*serviceEvaluator) GroupResource() schema.GroupResource {
	return servicesResource.GroupResource()
}

// Handles creates and updates: an update can change the service's type.
func (*serviceEvaluator) Handles(a admission.Attributes) bool {
	if a.GetSubresource() != "" {
		return false
	}
	return a.GetOperation() == admission.Create || a.GetOperation() == admission.Update
}

func (e *serviceEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, e.MatchingResources, generic.MatchesNoScopeFunc)
}

func (*serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, serviceResources)
}

func (*serviceEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (*serviceEvaluator) UncoveredQuotaScopes(_, _ []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

// Usage counts the service, and its node ports and load balancer by its type.
func (*serviceEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	svc, err := toService(item)
	if err != nil {
		return corev1.ResourceList{}, err
	}
	ports := int64(len(svc.Spec.Ports))
	result := corev1.ResourceList{
		serviceResources[0]:                  *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServices:              *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     {Format: resource.DecimalSI},
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		// Node ports are not allocated yet at admission: count the intent. Without node ports
		// for load balancers, only the ports that ask for one explicitly have one.
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			n := int64(0)
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
			result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(n, resource.DecimalSI)
		} else {
			result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		}
		result[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return result, nil
}

// toService reads a service as admission hands it (typed) or as the controller's dynamic informers
// hold it (unstructured).
func toService(obj any) (*corev1.Service, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		return o, nil
	case runtime.Unstructured:
		var svc corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), &svc); err != nil {
			return nil, fmt.Errorf("reading a service: %w", err)
		}
		return &svc, nil
	}
	return nil, fmt.Errorf("expect *v1.Service, got %T", obj)
}

func (e *serviceEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, e.list, generic.MatchesNoScopeFunc, e.Usage)
}
