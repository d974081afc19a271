package filters

import (
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"

	"github.com/apictl/apictl/pkg/serve/request"
)

// WithPriorityAndFairness is kube's API Priority and Fairness filter (k8s.io/apiserver
// WithPriorityAndFairness) in place of the max-in-flight limit: each request is classified by the
// FlowSchemas, charged the seats estimate gives it and queued fairly at its priority level; a level
// that is full answers 429 with a Retry-After. Responses name the FlowSchema and priority level that
// took them (X-Kubernetes-PF-FlowSchema-UID, X-Kubernetes-PF-PriorityLevel-UID). A watch holds its
// seats until its handler says it is initialized (utilflowcontrol.WatchInitialized); the other
// long-running requests are not limited. waitLimit bounds the time in a queue of a request without a
// deadline (kube: a quarter of --request-timeout).
//
// The library reads the request's info and user from k8s.io/apiserver's context, so the filter copies
// apictl's there first.
func WithPriorityAndFairness(fc utilflowcontrol.Interface, estimate flowcontrolrequest.WorkEstimatorFunc, waitLimit time.Duration) func(http.Handler) http.Handler {
	longRunning := func(r *http.Request, _ *genericapirequest.RequestInfo) bool {
		info, _ := request.RequestInfoFrom(r.Context())
		return IsLongRunning(info)
	}
	return func(next http.Handler) http.Handler {
		apf := genericfilters.WithPriorityAndFairness(next, longRunning, fc, estimate, waitLimit)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if info, ok := request.RequestInfoFrom(ctx); ok {
				ctx = genericapirequest.WithRequestInfo(ctx, GenericRequestInfo(info))
			}
			if u, ok := request.UserFrom(ctx); ok {
				ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra})
			}
			apf.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// GenericRequestInfo is info as k8s.io/apiserver spells it.
func GenericRequestInfo(info *request.RequestInfo) *genericapirequest.RequestInfo {
	return &genericapirequest.RequestInfo{
		IsResourceRequest: info.IsResourceRequest,
		Path:              info.Path,
		Verb:              info.Verb,
		APIPrefix:         info.APIPrefix,
		APIGroup:          info.APIGroup,
		APIVersion:        info.APIVersion,
		Namespace:         info.Namespace,
		Resource:          info.Resource,
		Subresource:       info.Subresource,
		Name:              info.Name,
		Parts:             info.Parts,
	}
}
