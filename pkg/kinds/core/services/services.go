// Package services is the core v1 Service kind: its route-model entry, decoding defaults,
// create and update rules, validation, status writes, warnings and printer. The cluster IPs, IP
// families and node ports that depend on --service-cluster-ip-range are the allocator's
// (pkg/allocator), which runs as the object is stored; the endpoint controllers and the
// default/kubernetes Service are pkg/controllers.
package services

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes Services: in the "all" category, with a status subresource (the load balancer's
// ingress), named by DNS-1123 labels (kube 1.37's RelaxedServiceNameValidation is GA), and answered
// with the deleted object on delete. kube also serves services/proxy, a connect subresource that
// proxies to the service's endpoints; apictl proxies nothing, so it is left out.
func Kind() kinds.Kind {
	doc := corev1.ServiceSpec{}.SwaggerDoc()
	svc := reflect.TypeFor[corev1.Service]()
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "services",
			Singular:   "service",
			Kind:       "Service",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"svc"},
			Categories: []string{"all"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(),
				model.ComputedColumn("Type", doc["type"], 0),
				model.ComputedColumn("Cluster-IP", doc["clusterIP"], 0),
				model.ComputedColumn("External-IP", doc["externalIPs"], 0),
				model.ComputedColumn("Port(s)", doc["ports"], 0),
				model.AgeColumn(),
				model.ComputedColumn("Selector", doc["selector"], 1),
			},
			Subresources: []model.Subresource{{Name: "status", Kind: "Service", Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: svc}},
			GoType:       svc,
			ListGoType:   reflect.TypeFor[corev1.ServiceList](),
		},
		NameRule: apivalidation.NameIsDNSLabel,
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("Type", doc["type"]),
				printers.Column("Cluster-IP", doc["clusterIP"]),
				printers.Column("External-IP", doc["externalIPs"]),
				printers.Column("Port(s)", doc["ports"]),
				printers.AgeColumn(),
				printers.Wide(printers.Column("Selector", doc["selector"])),
			},
			Cells: printers.Typed(cells),
		},
		Store: kinds.StoreRules{ReturnDeletedObject: true},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/core/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_Service"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateService and what it calls, ValidateServiceUpdate, ValidateServiceStatusUpdate (validation.go)"},
			{Path: "pkg/registry/core/service/strategy.go", Version: "v1.37.2", Parts: "PrepareForCreate, PrepareForUpdate, dropTypeDependentFields, patchAllocatedValues, normalizeClusterIPs, the status strategy (update.go)"},
			{Path: "pkg/api/service/warnings.go", Version: "v1.37.2", Parts: "GetWarningsForService"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printService, getServiceExternalIP, makePortString (printer.go)"},
		},
	}
}

// strategy is kube's for core v1 Services (pkg/registry/core/service and the v1 defaults). The
// cluster IPs, IP families and node ports that depend on --service-cluster-ip-range are the
// allocator's (pkg/allocator), which runs as the object is stored.
type strategy struct{}

// Default is kube's SetDefaults_Service.
func (strategy) Default(obj runtime.Object) {
	s := obj.(*corev1.Service)
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			timeout := corev1.DefaultClientIPServiceAffinitySeconds
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && needsNodePortOrClusterIPType(spec.Type) {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		spec.InternalTrafficPolicy = &cluster
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			yes := true
			spec.AllocateLoadBalancerNodePorts = &yes
		}
		vip := corev1.LoadBalancerIPModeVIP
		for i, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" && in.IPMode == nil {
				s.Status.LoadBalancer.Ingress[i].IPMode = &vip
			}
		}
	}
}

func needsNodePortOrClusterIPType(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer || t == corev1.ServiceTypeClusterIP
}

// externallyAccessible is kube's: load balancers, node ports, and cluster IPs with external IPs.
func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

// needsHealthCheck is kube's: a load balancer with the Local external traffic policy.
func needsHealthCheck(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// PrepareForCreate clears the status and makes clusterIPs follow a lone clusterIP, as kube's strategy and
// REST do before anything looks at them.
func (strategy) PrepareForCreate(obj runtime.Object) {
	s := obj.(*corev1.Service)
	s.Status = corev1.ServiceStatus{}
	if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	dropExternalNameTrafficPolicy(s)
}

// dropExternalNameTrafficPolicy removes the internalTrafficPolicy an ExternalName service has no use
// for. kube keeps it in storage and drops it from every read; it is dropped here before the write,
// after managedFields were recorded, so that clients read the same.
func dropExternalNameTrafficPolicy(s *corev1.Service) {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		s.Spec.InternalTrafficPolicy = nil
	}
}

// PrepareForUpdate keeps the status, fills in the allocated values a client left out (kube's
// patchAllocatedValues), keeps clusterIP and clusterIPs in step (normalizeClusterIPs) and drops the
// fields the new type no longer uses (dropTypeDependentFields).
func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	s.Status = o.Status
	patchAllocatedValues(s, o)
	normalizeClusterIPs(s, o)
	dropTypeDependentFields(s, o)
	dropExternalNameTrafficPolicy(s)
}

// Validate checks a new service. kube checks the cluster IPs, IP families and policy on their own
// first, as its allocator prepares them, and stops there if they are wrong: only then come the
// metadata and the rest of the service.
func (strategy) Validate(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Service)
	if errs := validateClusterIPsRelatedFields(s, nil); len(errs) > 0 {
		return errs
	}
	errs := apivalidation.ValidateObjectMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(errs, validateService(s, nil)...)
}

// ValidatesMeta: validate checks the metadata itself, after the cluster IPs.
func (strategy) ValidatesMeta() {}

func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*corev1.Service), old.(*corev1.Service)
	errs := validateServiceUpgrade(s, o)
	return append(errs, validateService(s, o)...)
}

func (strategy) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateLoadBalancerStatus(obj.(*corev1.Service))
}

// PrepareForStatusUpdate keeps the spec of old and what only the server sets, as kube's service status
// strategy does (k8s.io/kubernetes v1.37.2 pkg/registry/core/service/strategy.go resets only the
// spec): a status write may change labels and annotations (conformance: "should complete a service
// status lifecycle" patches an annotation with the load balancer's status).
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := obj.(*corev1.Service).DeepCopy()
	out.Spec = old.(*corev1.Service).Spec
	return out
}

func (strategy) WarningsOnCreate(obj runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

func (strategy) WarningsOnUpdate(obj, _ runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

// serviceWarnings are kube's (pkg/api/service GetWarningsForService), in its order.
func serviceWarnings(s *corev1.Service) []string {
	var warnings []string
	if _, ok := s.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		warnings = append(warnings, fmt.Sprintf("annotation %s is deprecated, please use %s instead",
			corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.ClusterIP != "" {
		for i, ip := range s.Spec.ClusterIPs {
			warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "clusterIPs").Index(i), ip)...)
		}
	}
	headless := s.Spec.Type == corev1.ServiceTypeClusterIP && s.Spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if s.Spec.LoadBalancerIP != "" {
			warnings = append(warnings, "spec.loadBalancerIP is ignored for headless services")
		}
		if len(s.Spec.ExternalIPs) > 0 {
			warnings = append(warnings, "spec.externalIPs is ignored for headless services")
		}
		if s.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			warnings = append(warnings, "spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range s.Spec.ExternalIPs {
		warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "externalIPs").Index(i), ip)...)
	}
	if len(s.Spec.ExternalIPs) > 0 && !headless && s.Spec.Type != corev1.ServiceTypeExternalName {
		warnings = append(warnings, "spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	if s.Spec.LoadBalancerIP != "" {
		warnings = append(warnings, utilvalidation.GetWarningsForIP(field.NewPath("spec", "loadBalancerIP"), s.Spec.LoadBalancerIP)...)
	}
	for i, cidr := range s.Spec.LoadBalancerSourceRanges {
		warnings = append(warnings, utilvalidation.GetWarningsForCIDR(field.NewPath("spec", "loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if s.Spec.Type == corev1.ServiceTypeExternalName && len(s.Spec.ExternalIPs) > 0 {
		warnings = append(warnings, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ExternalName != "" {
		warnings = append(warnings, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if td := s.Spec.TrafficDistribution; td != nil && *td == corev1.ServiceTrafficDistributionPreferClose {
		warnings = append(warnings, fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q",
			corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return warnings
}
