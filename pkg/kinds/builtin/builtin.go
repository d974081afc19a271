// Package builtin is the one list of the kinds that have a package of their own (pkg/kinds/<group>/
// <kind>). Adding a kind is one line here; the route model, the registry, the tables and the store
// find it through Lookup.
package builtin

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/admissionregistration"
	"github.com/apictl/apictl/pkg/kinds/apiextensions/customresourcedefinitions"
	"github.com/apictl/apictl/pkg/kinds/apiregistration/apiservices"
	"github.com/apictl/apictl/pkg/kinds/certificates/certificatesigningrequests"
	"github.com/apictl/apictl/pkg/kinds/certificates/clustertrustbundles"
	"github.com/apictl/apictl/pkg/kinds/coordination/leases"
	"github.com/apictl/apictl/pkg/kinds/core/configmaps"
	"github.com/apictl/apictl/pkg/kinds/core/endpoints"
	"github.com/apictl/apictl/pkg/kinds/core/events"
	"github.com/apictl/apictl/pkg/kinds/core/namespaces"
	"github.com/apictl/apictl/pkg/kinds/core/podtemplates"
	"github.com/apictl/apictl/pkg/kinds/core/resourcequotas"
	"github.com/apictl/apictl/pkg/kinds/core/secrets"
	"github.com/apictl/apictl/pkg/kinds/core/serviceaccounts"
	"github.com/apictl/apictl/pkg/kinds/core/services"
	"github.com/apictl/apictl/pkg/kinds/discovery/endpointslices"
	"github.com/apictl/apictl/pkg/kinds/flowcontrol/flowschemas"
	"github.com/apictl/apictl/pkg/kinds/flowcontrol/prioritylevelconfigurations"
	"github.com/apictl/apictl/pkg/kinds/networking/ipaddresses"
	"github.com/apictl/apictl/pkg/kinds/networking/servicecidrs"
	"github.com/apictl/apictl/pkg/kinds/rbac"
	"github.com/apictl/apictl/pkg/kinds/storagemigration/storageversionmigrations"
)

// Kinds returns every described kind, completed, in a new slice.
func Kinds() []kinds.Kind {
	all := []kinds.Kind{
		events.Kind(),
		apiservices.Kind(),
		events.EventsV1Kind(),
		admissionregistration.ValidatingWebhookConfigurationKind(),
		admissionregistration.MutatingWebhookConfigurationKind(),
		admissionregistration.ValidatingAdmissionPolicyKind(),
		admissionregistration.ValidatingAdmissionPolicyBindingKind(),
		admissionregistration.MutatingAdmissionPolicyKind(),
		admissionregistration.MutatingAdmissionPolicyBindingKind(),
		customresourcedefinitions.Kind(),
		configmaps.Kind(),
		namespaces.Kind(),
		services.Kind(),
		endpoints.Kind(),
		endpointslices.Kind(),
		secrets.Kind(),
		serviceaccounts.Kind(),
		leases.Kind(),
		rbac.RoleKind(),
		rbac.ClusterRoleKind(),
		rbac.RoleBindingKind(),
		rbac.ClusterRoleBindingKind(),
		podtemplates.Kind(),
		storageversionmigrations.Kind(),
		servicecidrs.Kind(),
		ipaddresses.Kind(),
		flowschemas.Kind(),
		prioritylevelconfigurations.Kind(),
		certificatesigningrequests.Kind(),
		clustertrustbundles.Kind(),
		resourcequotas.Kind(),
	}
	for i := range all {
		all[i] = all[i].Complete()
	}
	return all
}

// index is built once: the descriptors are values that nothing changes after Kinds made them.
var index = sync.OnceValue(func() map[schema.GroupKind]*kinds.Kind {
	all := Kinds()
	m := make(map[schema.GroupKind]*kinds.Kind, len(all))
	for i := range all {
		m[all[i].GroupVersionKind().GroupKind()] = &all[i]
	}
	return m
})

// byGoType indexes the descriptors by their k8s.io/api type, for code that holds a typed object.
var byGoType = sync.OnceValue(func() map[reflect.Type]*kinds.Kind {
	m := map[reflect.Type]*kinds.Kind{}
	for _, k := range index() {
		m[k.Resource.GoType] = k
	}
	return m
})

// LookupObject returns the descriptor of obj's kind, a pointer to a described kind's k8s.io/api
// type. The descriptor is shared: do not change it.
func LookupObject(obj runtime.Object) (*kinds.Kind, bool) {
	t := reflect.TypeOf(obj)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, false
	}
	k, ok := byGoType()[t.Elem()]
	return k, ok
}

// Lookup returns the descriptor of a kind, whatever version it is asked at. The descriptor is
// shared: do not change it.
func Lookup(gk schema.GroupKind) (*kinds.Kind, bool) {
	k, ok := index()[gk]
	return k, ok
}
