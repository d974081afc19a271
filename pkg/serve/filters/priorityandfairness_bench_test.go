package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// newTestPriorityAndFairness runs k8s.io/apiserver's APF controller on kube's bootstrap
// configuration, held by a fake clientset, until the test ends, and returns the filter over it.
func newTestPriorityAndFairness(tb testing.TB) (*PriorityAndFairness, *prometheus.Registry) {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewSimpleClientset()
	// The fake clientset gives no UIDs, and the filter's headers name them.
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...) {
		pl = pl.DeepCopy()
		pl.UID = types.UID("pl-" + pl.Name)
		if _, err := client.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...) {
		fs = fs.DeepCopy()
		fs.UID = types.UID("fs-" + fs.Name)
		if _, err := client.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	fcmetrics.Register()
	fc := utilflowcontrol.New(factory, client.FlowcontrolV1(), 600)
	factory.Start(ctx.Done())
	done := make(chan struct{})
	tb.Cleanup(func() { cancel(); <-done; factory.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), factory.Flowcontrol().V1().FlowSchemas().Informer().HasSynced,
		factory.Flowcontrol().V1().PriorityLevelConfigurations().Informer().HasSynced) {
		tb.Fatal("informers did not sync")
	}
	go func() { defer close(done); _ = fc.Run(ctx.Done()) }()
	time.Sleep(500 * time.Millisecond) // the controller digests the configuration
	estimate := flowcontrolrequest.NewWorkEstimator(func(string) (apiserverstorage.Stats, error) {
		return apiserverstorage.Stats{}, flowcontrolrequest.ObjectCountNotFoundErr
	}, fc.GetInterestedWatchCount, flowcontrolrequest.DefaultWorkEstimatorConfig(), fc.GetMaxSeats)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		tb.Fatal(err)
	}
	return NewPriorityAndFairness(fc, estimate, time.Minute, m), reg
}

// apfRequest makes a request as u, with the context the filters before APF give it.
func newAPFRequest(u *request.User, method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	return r.WithContext(request.WithRequestInfo(request.WithUser(r.Context(), u), request.NewRequestInfo(r)))
}

var (
	apfAdmin = &request.User{Name: "admin", Groups: []string{request.GroupMasters, request.GroupAuthenticated}}
	apfAlice = &request.User{Name: "alice", Groups: []string{request.GroupAuthenticated}}
)

// BenchmarkPriorityAndFairness is what the APF filter costs a GET, over a handler that does
// nothing, with kube's bootstrap configuration: an exempt user (system:masters) and one that
// global-default takes. The bench harness's GET rows pay it on every request.
func BenchmarkPriorityAndFairness(b *testing.B) {
	apf, _ := newTestPriorityAndFairness(b)
	h := apf.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	for _, u := range []*request.User{apfAdmin, apfAlice} {
		b.Run(u.Name, func(b *testing.B) {
			r := newAPFRequest(u, http.MethodGet, "/api/v1/namespaces/default/configmaps/x")
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
