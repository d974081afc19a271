package autoregister

import (
	"context"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	crdinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// recorder is a Registration that remembers what is desired.
type recorder struct {
	mu      sync.Mutex
	desired map[string]*apiregistrationv1.APIService
	changed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{desired: map[string]*apiregistrationv1.APIService{}, changed: make(chan struct{}, 100)}
}

func (r *recorder) AddAPIServiceToSync(in *apiregistrationv1.APIService) {
	r.mu.Lock()
	r.desired[in.Name] = in
	r.mu.Unlock()
	r.changed <- struct{}{}
}

func (r *recorder) RemoveAPIServiceToSync(name string) {
	r.mu.Lock()
	delete(r.desired, name)
	r.mu.Unlock()
	r.changed <- struct{}{}
}

func (r *recorder) names() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for n := range r.desired {
		out[n] = true
	}
	return out
}

func crd(name, group string, versions map[string]bool) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group}}
	for v, served := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: served})
	}
	return c
}

// TestCRDs follows kube's crdRegistrationController: every served version of every CRD is desired
// with priorities 1000/100, a version no CRD serves any more is removed, and versions shared by two
// CRDs of one group stay while one of them serves them.
func TestCRDs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client := crdfake.NewClientset(
		crd("widgets.example.com", "example.com", map[string]bool{"v1": true, "v2": false}),
		crd("gadgets.example.com", "example.com", map[string]bool{"v1": true}),
	)
	factory := crdinformers.NewSharedInformerFactory(client, 0)
	rec := newRecorder()
	c, err := NewCRDs(factory.Apiextensions().V1().CustomResourceDefinitions(), rec, quiet())
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	defer func() { cancel(); wg.Wait(); factory.Shutdown() }()
	select {
	case <-c.InitialSync():
	case <-time.After(10 * time.Second):
		t.Fatal("no initial sync")
	}
	if got := rec.names(); len(got) != 1 || !got["v1.example.com"] {
		t.Fatalf("desired after the initial sync = %v, want only v1.example.com", got)
	}
	rec.mu.Lock()
	s := rec.desired["v1.example.com"]
	rec.mu.Unlock()
	if s.Spec.Group != "example.com" || s.Spec.Version != "v1" || s.Spec.GroupPriorityMinimum != 1000 || s.Spec.VersionPriority != 100 || s.Spec.Service != nil {
		t.Errorf("v1.example.com spec = %+v, want Local 1000/100", s.Spec)
	}

	waitFor := func(what string, ok func(map[string]bool) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for !ok(rec.names()) {
			select {
			case <-rec.changed:
			case <-deadline:
				t.Fatalf("%s: desired = %v", what, rec.names())
			}
		}
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	// Serving v2 adds it; deleting one of two CRDs serving v1 keeps v1.
	w := crd("widgets.example.com", "example.com", map[string]bool{"v1": true, "v2": true})
	if _, err := crds.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("v2 served", func(n map[string]bool) bool { return n["v2.example.com"] })
	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd("things.other.io", "other.io", map[string]bool{"v1alpha1": true}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("other.io created", func(n map[string]bool) bool { return n["v1alpha1.other.io"] })
	if !rec.names()["v1.example.com"] {
		t.Fatal("v1.example.com removed while widgets still serves it")
	}
	if err := crds.Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("widgets deleted", func(n map[string]bool) bool { return !n["v1.example.com"] && !n["v2.example.com"] })
}
