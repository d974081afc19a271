package autoregister

import (
	"context"
	"io"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	"k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
	apiregistrationlisters "k8s.io/kube-aggregator/pkg/client/listers/apiregistration/v1"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func apiService(name, managed, group string) *apiregistrationv1.APIService {
	s := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "1"},
		Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 100}}
	if managed != "" {
		s.Labels = map[string]string{ManagedLabel: managed}
	}
	return s
}

// TestSync walks kube's table (checkAPIService): what the controller does for each current object
// and each desire, including the once-only rules of onstart.
func TestSync(t *testing.T) {
	const name = "v1.example.com"
	tests := []struct {
		name         string
		current      *apiregistrationv1.APIService // in the informer and the API
		inAPIOnly    *apiregistrationv1.APIService // created by another server, not yet in the informer
		desired      string                        // "", ManageOnStart or ManageContinuously
		desiredGroup string
		atStart      bool
		synced       bool
		want         string // the verb of the one expected write, or ""
		wantLabel    string
	}{
		{name: "2A nothing wanted, nothing there"},
		{name: "2B create on start", desired: ManageOnStart, want: "create", wantLabel: ManageOnStart},
		{name: "2B created once only", desired: ManageOnStart, synced: true},
		{name: "2C create", desired: ManageContinuously, want: "create", wantLabel: ManageContinuously},
		{name: "2C another server created it", desired: ManageContinuously, inAPIOnly: apiService(name, ManageContinuously, "example.com"), want: "create", wantLabel: ManageContinuously},
		{name: "3 the user's object is left alone", current: apiService(name, "", "other"), desired: ManageContinuously, atStart: true},
		{name: "3 the user's object is not deleted", current: apiService(name, "", "other"), atStart: true},
		{name: "4 onstart object created after start", current: apiService(name, ManageOnStart, "other"), desired: ManageContinuously},
		{name: "4 onstart object created after start is not deleted", current: apiService(name, ManageOnStart, "other")},
		{name: "5A onstart object deleted once", current: apiService(name, ManageOnStart, "example.com"), atStart: true, want: "delete"},
		{name: "5A onstart object deleted once only", current: apiService(name, ManageOnStart, "example.com"), atStart: true, synced: true},
		{name: "5B onstart object updated once", current: apiService(name, ManageOnStart, "other"), desired: ManageOnStart, atStart: true, want: "update", wantLabel: ManageOnStart},
		{name: "5B onstart object updated once only", current: apiService(name, ManageOnStart, "other"), desired: ManageOnStart, atStart: true, synced: true},
		{name: "5C onstart object updated once", current: apiService(name, ManageOnStart, "other"), desired: ManageContinuously, atStart: true, want: "update", wantLabel: ManageOnStart},
		{name: "6A managed object deleted", current: apiService(name, ManageContinuously, "example.com"), want: "delete"},
		{name: "6A managed object deleted also later", current: apiService(name, ManageContinuously, "example.com"), synced: true, want: "delete"},
		{name: "6C managed object updated", current: apiService(name, ManageContinuously, "other"), desired: ManageContinuously, synced: true, want: "update", wantLabel: ManageContinuously},
		{name: "6C matching spec is not written", current: apiService(name, ManageContinuously, "example.com"), desired: ManageContinuously},
		{name: "6B sync always object updated once on start", current: apiService(name, ManageContinuously, "other"), desired: ManageOnStart, want: "update", wantLabel: ManageContinuously},
		{name: "6B once only", current: apiService(name, ManageContinuously, "other"), desired: ManageOnStart, synced: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			var objs []runtime.Object
			if tt.current != nil {
				if err := indexer.Add(tt.current); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, tt.current)
			}
			if tt.inAPIOnly != nil {
				objs = append(objs, tt.inAPIOnly)
			}
			client := fake.NewClientset(objs...)
			c := newController(apiregistrationlisters.NewAPIServiceLister(indexer), client.ApiregistrationV1(), quiet())
			defer c.queue.ShutDown()
			switch tt.desired {
			case ManageOnStart:
				c.AddAPIServiceToSyncOnStart(apiService(name, "", "example.com"))
			case ManageContinuously:
				c.AddAPIServiceToSync(apiService(name, "", "example.com"))
			}
			c.atStart[name] = tt.atStart
			c.syncedOnce[name] = tt.synced
			if err := c.sync(context.Background(), name); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if !c.syncedOnce[name] {
				t.Error("a successful sync is not recorded")
			}
			var writes []clienttesting.Action
			for _, a := range client.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
					writes = append(writes, a)
				}
			}
			if tt.want == "" {
				if len(writes) != 0 {
					t.Fatalf("want no write, got %v", writes)
				}
				return
			}
			if len(writes) != 1 || writes[0].GetVerb() != tt.want {
				t.Fatalf("want one %s, got %v", tt.want, writes)
			}
			switch a := writes[0].(type) {
			case clienttesting.CreateAction: // updates too: an UpdateAction is a CreateAction
				checkWritten(t, a.GetObject().(*apiregistrationv1.APIService), tt.wantLabel)
			case clienttesting.DeleteAction:
				// kube deletes with the UID it saw, so that a replacement made meanwhile survives.
				if p := a.GetDeleteOptions().Preconditions; p == nil || p.UID == nil || *p.UID != tt.current.UID {
					t.Errorf("delete preconditions = %+v, want the UID %s", p, tt.current.UID)
				}
			}
		})
	}
}

func checkWritten(t *testing.T, s *apiregistrationv1.APIService, label string) {
	t.Helper()
	if s.Labels[ManagedLabel] != label {
		t.Errorf("label %s = %q, want %q", ManagedLabel, s.Labels[ManagedLabel], label)
	}
	if s.Spec.Group != "example.com" || s.Spec.Service != nil {
		t.Errorf("spec = %+v, want the desired Local spec", s.Spec)
	}
}

// TestBuiltin pins the APIServices kube-apiserver v1.37.2 creates for its group versions (as
// `kubectl get apiservices -o yaml` showed on the reference server) and that group versions
// without a priority get none.
func TestBuiltin(t *testing.T) {
	want := map[string][2]int32{
		"v1.": {18000, 1}, "v1.admissionregistration.k8s.io": {16700, 15}, "v1.apiextensions.k8s.io": {16700, 15},
		"v1.apps": {17800, 15}, "v1.authentication.k8s.io": {17700, 15}, "v1.authorization.k8s.io": {17600, 15},
		"v1.autoscaling": {17500, 15}, "v2.autoscaling": {17500, 30}, "v1.batch": {17400, 15},
		"v1.certificates.k8s.io": {17300, 15}, "v1.coordination.k8s.io": {16500, 15}, "v1.discovery.k8s.io": {16200, 15},
		"v1.events.k8s.io": {17750, 15}, "v1.flowcontrol.apiserver.k8s.io": {16100, 21}, "v1.networking.k8s.io": {17200, 15},
		"v1.node.k8s.io": {16300, 15}, "v1.policy": {17100, 15}, "v1.rbac.authorization.k8s.io": {17000, 15},
		"v1.resource.k8s.io": {16200, 21}, "v1.scheduling.k8s.io": {16600, 15}, "v1.storage.k8s.io": {16800, 15},
		"v1.storagemigration.k8s.io": {15800, 15},
	}
	var served []schema.GroupVersion
	for name := range want {
		served = append(served, gvOf(name))
	}
	served = append(served, schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}, schema.GroupVersion{Group: "example.com", Version: "v1"})
	got := Builtin(served)
	if len(got) != len(want) {
		t.Fatalf("got %d apiservices, want %d", len(got), len(want))
	}
	for _, s := range got {
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected apiservice %s", s.Name)
			continue
		}
		if s.Spec.GroupPriorityMinimum != w[0] || s.Spec.VersionPriority != w[1] {
			t.Errorf("%s: priorities %d/%d, want %d/%d", s.Name, s.Spec.GroupPriorityMinimum, s.Spec.VersionPriority, w[0], w[1])
		}
		if s.Spec.Service != nil || s.Name != Name(gvOf(s.Name)) || s.Spec.Group != gvOf(s.Name).Group {
			t.Errorf("%s: not a Local APIService of its group version: %+v", s.Name, s.Spec)
		}
	}
}

func gvOf(name string) schema.GroupVersion { return helper.APIServiceNameToGroupVersion(name) }
