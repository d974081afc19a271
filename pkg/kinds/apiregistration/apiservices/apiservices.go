// Package apiservices is kube-aggregator's apiregistration.k8s.io/v1 APIService kind: its route-model
// entry, v1's defaults, create and update rules, validation (kube-aggregator's own, on its internal
// type), status writes and printer. The controllers that keep APIServices (autoregister,
// availability) are pkg/controllers.
package apiservices

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

const (
	serviceDoc   = "The reference to the service that hosts this API endpoint."
	availableDoc = "Whether this service is available."
)

// Kind describes APIServices: cluster-scoped, in the api-extensions category, with a status
// subresource. Their name is checked as a path segment by the store ("v1." is the core group's), then
// as <version>.<group> by their validation; kube refuses an update without a resourceVersion.
func Kind() kinds.Kind {
	obj := reflect.TypeFor[apiregistrationv1.APIService]()
	return kinds.Kind{
		Group:   apiregistrationv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "apiservices",
			Singular:   "apiservice",
			Kind:       "APIService",
			Verbs:      model.StandardVerbs(),
			Categories: []string{"api-extensions"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("Service", serviceDoc, 0), model.ComputedColumn("Available", availableDoc, 0), model.AgeColumn(),
			},
			Subresources: []model.Subresource{{Name: "status", Kind: "APIService", Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: obj}},
			GoType:       obj,
			ListGoType:   reflect.TypeFor[apiregistrationv1.APIServiceList](),
		},
		NameRule: func(name string, _ bool) []string { return content.IsPathSegmentName(name) },
		Strategy: strategy{newScheme()},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(), printers.Column("Service", serviceDoc), printers.Column("Available", availableDoc), printers.AgeColumn(),
			},
			Cells: printers.Typed(cells),
		},
		Store: kinds.StoreRules{RequireResourceVersion: true},
		Upstream: []kinds.Upstream{
			{Path: "staging/src/k8s.io/kube-aggregator/pkg/registry/apiservice/strategy.go", Version: "v1.37.2", Parts: "apiServerStrategy, apiServerStatusStrategy"},
			{Path: "staging/src/k8s.io/kube-aggregator/pkg/registry/apiservice/etcd/etcd.go", Version: "v1.37.2", Parts: "the table convertor (cells)"},
		},
	}
}

// newScheme holds the internal and v1 types of apiregistration.k8s.io, their conversions and v1's
// defaults (service port 443). Registering kube-aggregator's own types cannot fail.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(apiregistration.AddToScheme(scheme))
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme))
	return scheme
}

// strategy is kube-aggregator's for APIServices: its validation runs on the internal type, so each
// check converts the v1 object with kube-aggregator's own conversions first. A local APIService (no
// service) is Available from its creation; a remote one waits for the availability controller. The
// scheme is only read.
type strategy struct{ scheme *runtime.Scheme }

// ValidatesMeta: kube's ValidateAPIService checks metadata itself, with the name rule
// <version>.<group>.
func (strategy) ValidatesMeta() {}

// Default applies v1's defaults as kube's decoder does.
func (s strategy) Default(obj runtime.Object) { s.scheme.Default(obj) }

// PrepareForCreate clears status and marks a local APIService Available, as kube's strategy does.
func (s strategy) PrepareForCreate(obj runtime.Object) {
	s.Default(obj)
	a := obj.(*apiregistrationv1.APIService)
	a.Status = apiregistrationv1.APIServiceStatus{}
	if a.Spec.Service == nil {
		c := apiregistration.NewLocalAvailableAPIServiceCondition()
		a.Status.Conditions = []apiregistrationv1.APIServiceCondition{{
			Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		}}
	}
}

// PrepareForUpdate keeps the stored status: it is written through /status only.
func (s strategy) PrepareForUpdate(obj, old runtime.Object) {
	s.Default(obj)
	obj.(*apiregistrationv1.APIService).Status = old.(*apiregistrationv1.APIService).Status
}

// internal converts a v1 APIService to kube-aggregator's internal type.
func (s strategy) internal(obj runtime.Object) (*apiregistration.APIService, error) {
	out := &apiregistration.APIService{}
	if err := s.scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("converting the APIService to the internal version: %w", err)
	}
	return out, nil
}

// Validate is kube's ValidateAPIService: the name must be <version>.<group>, group and version
// well-formed, priorities in range, a local APIService without caBundle or insecureSkipTLSVerify, a
// remote one with a service name, namespace and valid port. kube's takes a context only for the
// declarative validation of metadata, which needs nothing from the request.
func (s strategy) Validate(obj runtime.Object) field.ErrorList {
	a, err := s.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return apiregistrationvalidation.ValidateAPIService(context.Background(), a)
}

// ValidateUpdate is kube's ValidateAPIServiceUpdate.
func (s strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return s.validatePair(obj, old, apiregistrationvalidation.ValidateAPIServiceUpdate)
}

// ValidateStatusUpdate is kube's ValidateAPIServiceStatusUpdate: condition statuses True, False or
// Unknown.
func (s strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return s.validatePair(obj, old, apiregistrationvalidation.ValidateAPIServiceStatusUpdate)
}

func (s strategy) validatePair(obj, old runtime.Object, validate func(context.Context, *apiregistration.APIService, *apiregistration.APIService) field.ErrorList) field.ErrorList {
	a, err := s.internal(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldA, err := s.internal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validate(context.Background(), a, oldA)
}

// PrepareForStatusUpdate keeps everything of old but the status: kube's status strategy takes spec,
// labels, annotations, finalizers and owners from the stored object.
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.(*apiregistrationv1.APIService).DeepCopy()
	out.Status = obj.(*apiregistrationv1.APIService).Status
	return out
}

// cells are kube-aggregator's table convertor: the service as namespace/name or Local, and the
// Available condition with its reason when it is not True.
func cells(a *apiregistrationv1.APIService, now time.Time) []any {
	service := "Local"
	if a.Spec.Service != nil {
		service = fmt.Sprintf("%s/%s", a.Spec.Service.Namespace, a.Spec.Service.Name)
	}
	return []any{a.Name, service, availableCell(a.Status.Conditions), printers.Age(a.CreationTimestamp, now)}
}

// availableCell is the first Available condition's status, with its reason unless True; Unknown
// without one.
func availableCell(conditions []apiregistrationv1.APIServiceCondition) string {
	for _, c := range conditions {
		if c.Type != apiregistrationv1.Available {
			continue
		}
		if c.Status == apiregistrationv1.ConditionTrue || c.Reason == "" {
			return string(c.Status)
		}
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
	return string(apiregistrationv1.ConditionUnknown)
}
