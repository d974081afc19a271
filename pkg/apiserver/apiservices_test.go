package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/controllers/autoregister"
	"github.com/apictl/apictl/pkg/controllers/extensionauth"
)

// localAvailable reports whether s is a Local APIService that is Available as kube says Local ones are.
func localAvailable(s *apiregistrationv1.APIService) bool {
	c := helper.GetAPIServiceConditionByType(s, apiregistrationv1.Available)
	return s.Spec.Service == nil && c != nil && c.Status == apiregistrationv1.ConditionTrue && c.Reason == "Local" &&
		c.Message == "Local APIServices are always available"
}

// TestLocalAPIServices: when the server is ready, every built-in group version kube registers has
// its Local APIService (onstart, kube's priorities, Available); a CRD created at runtime gets one
// (automanaged "true", 1000/100) that goes away with it; and an APIService a user created is left
// as it is, yet gets its condition.
func TestLocalAPIServices(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	apiServices := aggregatorclient.NewForConfigOrDie(s.AdminConfig).ApiregistrationV1().APIServices()

	// /readyz waits for them, as kube's autoregister-completion check does (the test server is
	// ready when its hooks are done, before that).
	readyz := kubernetes.NewForConfigOrDie(s.AdminConfig).Discovery().RESTClient().Get().AbsPath("/readyz")
	eventually(t, "/readyz", func() error {
		body, err := readyz.DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%w: %s", err, body)
		}
		return nil
	})
	list, err := apiServices.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := discovery.NewDiscoveryClientForConfigOrDie(s.AdminConfig).ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var served []schema.GroupVersion
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			served = append(served, schema.GroupVersion{Group: g.Name, Version: v.Version})
		}
	}
	want := map[string]*apiregistrationv1.APIService{}
	for _, a := range autoregister.Builtin(served) {
		want[a.Name] = a
	}
	if want["v1."] == nil || want["v1.rbac.authorization.k8s.io"] == nil {
		t.Fatalf("discovery lacks core or rbac: %v", served)
	}
	got := map[string]bool{}
	for i := range list.Items {
		a := &list.Items[i]
		got[a.Name] = true
		w, ok := want[a.Name]
		if !ok {
			t.Errorf("unexpected apiservice %s", a.Name)
			continue
		}
		if !reflect.DeepEqual(a.Spec, w.Spec) || a.Labels[autoregister.ManagedLabel] != autoregister.ManageOnStart || !localAvailable(a) {
			t.Errorf("apiservice %s: labels %v spec %+v status %+v", a.Name, a.Labels, a.Spec, a.Status)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("apiservice %s missing", name)
		}
	}

	// A CRD's group version comes and goes with it.
	crds := apiextensionsclient.NewForConfigOrDie(s.AdminConfig).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, replicaCRD(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "v1.example.com registered", func() error {
		a, err := apiServices.Get(ctx, "v1.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if a.Labels[autoregister.ManagedLabel] != autoregister.ManageContinuously || a.Spec.Group != "example.com" ||
			a.Spec.Version != "v1" || a.Spec.GroupPriorityMinimum != 1000 || a.Spec.VersionPriority != 100 || !localAvailable(a) {
			return fmt.Errorf("labels %v spec %+v status %+v", a.Labels, a.Spec, a.Status)
		}
		return nil
	})
	if err := crds.Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "v1.example.com removed", func() error {
		_, err := apiServices.Get(ctx, "v1.example.com", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})

	// The user's own Local APIService: not managed, never deleted, but Available.
	mine := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.mine.example"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "mine.example", Version: "v1alpha1", GroupPriorityMinimum: 10, VersionPriority: 5}}
	if _, err := apiServices.Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the user's apiservice available", func() error {
		a, err := apiServices.Get(ctx, mine.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !localAvailable(a) || a.Labels[autoregister.ManagedLabel] != "" {
			return fmt.Errorf("labels %v status %+v", a.Labels, a.Status)
		}
		return nil
	})
}

// TestExtensionAuthConfigMap: kube-system/extension-apiserver-authentication carries what the
// server trusts in the reference kube-apiserver's layout (bootstrapped PKI: the cluster CA and
// kubeadm's front-proxy settings; no uid key without --requestheader-uid-headers), and extension
// servers' Role to read it exists.
func TestExtensionAuthConfigMap(t *testing.T) {
	s := servertest.Start(t)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(s.CertDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	want := map[string]string{
		extensionauth.KeyClientCA:                 read("ca.crt"),
		extensionauth.KeyRequestHeaderClientCA:    read("front-proxy-ca.crt"),
		extensionauth.KeyRequestHeaderAllowed:     `["front-proxy-client"]`,
		extensionauth.KeyRequestHeaderExtraPrefix: `["X-Remote-Extra-"]`,
		extensionauth.KeyRequestHeaderGroup:       `["X-Remote-Group"]`,
		extensionauth.KeyRequestHeaderUsername:    `["X-Remote-User"]`,
	}
	eventually(t, "the configmap published", func() error {
		cm, err := kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(cm.Data, want) {
			return fmt.Errorf("data %v, want %v", cm.Data, want)
		}
		return nil
	})

	// The reference server's Role and RoleBinding, as `kubectl get -o yaml` showed them.
	// They are reconciled beside the rbac/bootstrap-roles hook, not before readiness.
	var role *rbacv1.Role
	eventually(t, "the reader role", func() (err error) {
		role, err = kube.RbacV1().Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{})
		return err
	})
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{"extension-apiserver-authentication"}, Verbs: []string{"get", "list", "watch"}}}
	if !reflect.DeepEqual(role.Rules, wantRules) || role.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" ||
		role.Annotations["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
		t.Errorf("role: labels %v annotations %v rules %+v", role.Labels, role.Annotations, role.Rules)
	}
	var binding *rbacv1.RoleBinding
	eventually(t, "the reader rolebinding", func() (err error) {
		binding, err = kube.RbacV1().RoleBindings("kube-system").Get(ctx, "system::extension-apiserver-authentication-reader", metav1.GetOptions{})
		return err
	})
	wantSubjects := []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "system:kube-controller-manager"},
		{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "system:kube-scheduler"}}
	if !reflect.DeepEqual(binding.Subjects, wantSubjects) || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
		t.Errorf("rolebinding: roleRef %+v subjects %+v", binding.RoleRef, binding.Subjects)
	}
}

// TestAPIServicesTwoReplicas: two servers on one etcd register the same APIServices without
// fighting: once both are ready, nothing rewrites them.
func TestAPIServicesTwoReplicas(t *testing.T) {
	etcd, _ := etcdForTest(t)
	a := servertest.Start(t, "--etcd-servers", etcd)
	b := servertest.Start(t, "--etcd-servers", etcd)
	ctx := context.Background()
	for _, s := range []*servertest.Server{a, b} {
		readyz := kubernetes.NewForConfigOrDie(s.AdminConfig).Discovery().RESTClient().Get().AbsPath("/readyz")
		eventually(t, "/readyz", func() error {
			body, err := readyz.DoRaw(ctx)
			if err != nil {
				return fmt.Errorf("%w: %s", err, body)
			}
			return nil
		})
	}
	apiServices := aggregatorclient.NewForConfigOrDie(a.AdminConfig).ApiregistrationV1().APIServices()
	before, err := apiServices.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Writes still in flight settle within a moment; after that nothing changes.
	time.Sleep(time.Second)
	settled, err := apiServices.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := apiServices.Watch(ctx, metav1.ListOptions{ResourceVersion: settled.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		t.Errorf("an apiservice changed after both replicas were ready: %s %+v", ev.Type, ev.Object)
	case <-time.After(2 * time.Second):
	}
	if len(settled.Items) != len(before.Items) || len(settled.Items) == 0 {
		t.Errorf("apiservices: %d before, %d after", len(before.Items), len(settled.Items))
	}
	for i := range settled.Items {
		if !localAvailable(&settled.Items[i]) {
			t.Errorf("apiservice %s not available: %+v", settled.Items[i].Name, settled.Items[i].Status)
		}
	}
}
