package apiserviceavailable

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	aggfake "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
	agginformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
)

// TestScopes: the local controller (every replica) writes only local APIServices, the remote one
// (once per cluster) only remote ones; a controller's handlers leave the shared informers when its
// Run returns, and a new controller on the same informers takes over, as after a new Lease term.
func TestScopes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	local := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}}
	agg := aggfake.NewClientset(local, remote("v1.example.com", "example.com"))
	kube := kubefake.NewClientset()
	aggInf, kubeInf := agginformers.NewSharedInformerFactory(agg, 0), informers.NewSharedInformerFactory(kube, 0)
	newController := func(only Scope) *Controller {
		c, err := New(Config{APIServices: aggInf.Apiregistration().V1().APIServices(), Services: kubeInf.Core().V1().Services(),
			EndpointSlices: kubeInf.Discovery().V1().EndpointSlices(), Client: agg.ApiregistrationV1(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Only: only})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	condition := func(name string) *apiregistrationv1.APIServiceCondition {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return helper.GetAPIServiceConditionByType(got, apiregistrationv1.Available)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	run := func(c *Controller) (stop func()) {
		runCtx, cancelRun := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { c.Run(runCtx, 2) })
		return func() { cancelRun(); wg.Wait() }
	}

	localCtl := newController(LocalOnly)
	if len(localCtl.handlers) != 1 {
		t.Fatalf("the local controller watches %d informers, want the APIServices' alone", len(localCtl.handlers))
	}
	aggInf.Start(ctx.Done())
	kubeInf.Start(ctx.Done())
	defer func() { cancel(); aggInf.Shutdown(); kubeInf.Shutdown() }()
	stopLocal := run(localCtl)
	defer stopLocal()
	waitFor("the local APIService is available", func() bool {
		c := condition("v1.apps")
		return c != nil && c.Status == apiregistrationv1.ConditionTrue
	})
	time.Sleep(200 * time.Millisecond)
	if c := condition("v1.example.com"); c != nil {
		t.Fatalf("the local controller set a remote APIService's condition: %+v", c)
	}

	for term := 1; term <= 2; term++ {
		remoteCtl := newController(RemoteOnly)
		stop := run(remoteCtl)
		waitFor("the remote APIService's condition is set", func() bool {
			c := condition("v1.example.com")
			return c != nil && c.Reason == "ServiceNotFound"
		})
		stop()
		if len(remoteCtl.handlers) != 0 {
			t.Fatalf("term %d: the controller's handlers stayed on the informers after Run returned", term)
		}
		// The next term finds the condition to set again.
		s, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1.example.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Status = apiregistrationv1.APIServiceStatus{}
		if _, err := agg.ApiregistrationV1().APIServices().UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
