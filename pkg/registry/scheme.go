package registry

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// BuiltinScheme registers the Go types of the built-in kinds apictl serves, for the serializers that
// read and write them as kube does (protobuf bodies of kubectl's typed clients, audit's JSON of them).
// It is small on purpose: client-go's scheme registers every group kube has.
func BuiltinScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, rbacv1.AddToScheme,
		authenticationv1.AddToScheme, authorizationv1.AddToScheme, apiextensionsv1.AddToScheme, discoveryv1.AddToScheme,
		admissionregistrationv1.AddToScheme, apiregistrationv1.AddToScheme, eventsv1.AddToScheme, storagemigrationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("registering the built-in kinds: %w", err)
		}
	}
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return scheme, nil
}
