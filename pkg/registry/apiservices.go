package registry

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
)

// apiServiceRules are kube-aggregator's rules for APIServices (pkg/registry/apiservice): its
// strategy, and its validation, which runs on the internal type, so each check converts the v1
// object with kube-aggregator's own conversions first. A local APIService (no service) is
// Available from its creation; a remote one waits for the availability controller.
type apiServiceRules struct {
	// scheme holds the internal and v1 types of apiregistration.k8s.io, their conversions and v1's
	// defaults (service port 443); it is only read after newAPIServiceRules.
	scheme *runtime.Scheme
}

func newAPIServiceRules() (apiServiceRules, error) {
	scheme := runtime.NewScheme()
	if err := apiregistration.AddToScheme(scheme); err != nil {
		return apiServiceRules{}, fmt.Errorf("registering the internal apiregistration types: %w", err)
	}
	if err := apiregistrationv1.AddToScheme(scheme); err != nil {
		return apiServiceRules{}, fmt.Errorf("registering apiregistration.k8s.io/v1: %w", err)
	}
	return apiServiceRules{scheme: scheme}, nil
}

// validatesMeta: kube's ValidateAPIService checks metadata itself, with the name rule
// <version>.<group>.
func (apiServiceRules) validatesMeta() {}

// setDefaults applies v1's defaults as kube's decoder does.
func (a apiServiceRules) setDefaults(obj runtime.Object) { a.scheme.Default(obj) }

// prepareCreate clears status and marks a local APIService Available, as kube's strategy does.
func (a apiServiceRules) prepareCreate(obj runtime.Object) {
	a.setDefaults(obj)
	s := obj.(*apiregistrationv1.APIService)
	s.Status = apiregistrationv1.APIServiceStatus{}
	if s.Spec.Service == nil {
		c := apiregistration.NewLocalAvailableAPIServiceCondition()
		s.Status.Conditions = []apiregistrationv1.APIServiceCondition{{
			Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		}}
	}
}

// prepareUpdate keeps the stored status: it is written through /status only.
func (a apiServiceRules) prepareUpdate(obj, old runtime.Object) {
	a.setDefaults(obj)
	obj.(*apiregistrationv1.APIService).Status = old.(*apiregistrationv1.APIService).Status
}

// internal converts a v1 APIService to kube-aggregator's internal type.
func (a apiServiceRules) internal(obj runtime.Object) (*apiregistration.APIService, error) {
	out := &apiregistration.APIService{}
	if err := a.scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("converting the APIService to the internal version: %w", err)
	}
	return out, nil
}

// The kindRules interface carries no context; kube's APIService validation takes one only for
// declarative validation of metadata, which needs nothing from the request.

// validate is kube's ValidateAPIService: the name must be <version>.<group>, group and version
// well-formed, priorities in range, a local APIService without caBundle or insecureSkipTLSVerify, a
// remote one with a service name, namespace and valid port.
func (a apiServiceRules) validate(obj runtime.Object) field.ErrorList {
	s, err := a.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return apiregistrationvalidation.ValidateAPIService(context.Background(), s)
}

// validateUpdate is kube's ValidateAPIServiceUpdate.
func (a apiServiceRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	return a.validatePair(obj, old, apiregistrationvalidation.ValidateAPIServiceUpdate)
}

// validateStatusUpdate is kube's ValidateAPIServiceStatusUpdate: condition statuses True, False or
// Unknown.
func (a apiServiceRules) validateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return a.validatePair(obj, old, apiregistrationvalidation.ValidateAPIServiceStatusUpdate)
}

func (a apiServiceRules) validatePair(obj, old runtime.Object, validate func(context.Context, *apiregistration.APIService, *apiregistration.APIService) field.ErrorList) field.ErrorList {
	s, err := a.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldS, err := a.internal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validate(context.Background(), s, oldS)
}

// statusUpdate keeps everything of old but the status: kube's status strategy takes spec, labels,
// annotations, finalizers and owners from the stored object.
func (apiServiceRules) statusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.(*apiregistrationv1.APIService).DeepCopy()
	out.Status = obj.(*apiregistrationv1.APIService).Status
	return out
}
