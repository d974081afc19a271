package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	apiserverstorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/apictl/apictl/pkg/serve/request"
)

// BenchmarkPriorityAndFairness is what the APF filter costs a GET, over a handler that does
// nothing, with kube's bootstrap configuration: an exempt user (system:masters) and one that
// global-default takes. The bench harness's GET rows pay it on every request.
func BenchmarkPriorityAndFairness(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset()
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...) {
		if _, err := client.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...) {
		if _, err := client.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	fcmetrics.Register()
	fc := utilflowcontrol.New(factory, client.FlowcontrolV1(), 600)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	fsInformer := factory.Flowcontrol().V1().FlowSchemas().Informer()
	if !cache.WaitForCacheSync(ctx.Done(), fsInformer.HasSynced, factory.Flowcontrol().V1().PriorityLevelConfigurations().Informer().HasSynced) {
		b.Fatal("informers did not sync")
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = fc.Run(ctx.Done()) }()
	defer func() { cancel(); <-done }()
	time.Sleep(500 * time.Millisecond) // the controller digests the configuration
	estimate := flowcontrolrequest.NewWorkEstimator(func(string) (apiserverstorage.Stats, error) {
		return apiserverstorage.Stats{}, flowcontrolrequest.ObjectCountNotFoundErr
	},
		fc.GetInterestedWatchCount, flowcontrolrequest.DefaultWorkEstimatorConfig(), fc.GetMaxSeats)
	h := WithPriorityAndFairness(fc, estimate, time.Minute)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	for _, u := range []*request.User{
		{Name: "admin", Groups: []string{request.GroupMasters, request.GroupAuthenticated}},
		{Name: "alice", Groups: []string{request.GroupAuthenticated}},
	} {
		b.Run(u.Name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/x", nil)
			rctx := request.WithRequestInfo(request.WithUser(r.Context(), u), request.NewRequestInfo(r))
			r = r.WithContext(rctx)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
