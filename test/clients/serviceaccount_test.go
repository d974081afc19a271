package clients

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/apictl/apictl/internal/servertest"
)

// TestControllerAsServiceAccount is issue 13's client-go must-show: a controller that runs as a
// ServiceAccount, with a token from TokenRequest and only the RBAC rules it needs, runs an informer
// and leader election; what its rules leave out stays forbidden.
func TestControllerAsServiceAccount(t *testing.T) {
	srv := servertest.Start(t, "--authorization-mode", "RBAC")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig)
	const ns = "controllers"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must(err)
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "widget-controller"}}, metav1.CreateOptions{})
	must(err)
	_, err = admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "widget-controller"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
	}}, metav1.CreateOptions{})
	must(err)
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "widget-controller"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "widget-controller"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "widget-controller", Namespace: ns}},
	}, metav1.CreateOptions{})
	must(err)
	expiry := int64(600)
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "widget-controller",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	must(err)
	if tr.Status.Token == "" || tr.Status.ExpirationTimestamp.Time.Before(time.Now().Add(9*time.Minute)) {
		t.Fatalf("TokenRequest answered %+v", tr.Status)
	}

	cfg := rest.AnonymousClientConfig(srv.AdminConfig)
	cfg.BearerToken = tr.Status.Token
	client := kubernetes.NewForConfigOrDie(cfg)

	// Its rules take effect once the policy has seen the binding.
	eventually(t, "the service account's rules", func() bool {
		_, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err == nil
	})
	if _, err := client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing another namespace's ConfigMaps: %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets: %v, want Forbidden", err)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	seen := &recorder{}
	_, err = factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { seen.add("add " + obj.(*corev1.ConfigMap).Name) },
	})
	must(err)
	informerCtx, stopInformers := context.WithCancel(ctx)
	factory.Start(informerCtx.Done())
	defer func() { stopInformers(); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), factory.Core().V1().ConfigMaps().Informer().HasSynced) {
		t.Fatal("the informer did not sync")
	}
	_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "widget-1"}}, metav1.CreateOptions{})
	must(err)
	eventually(t, "the informer to see widget-1", func() bool { return seen.has("add widget-1") })

	leading := make(chan struct{})
	electionCtx, stopElection := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		leaderelection.RunOrDie(electionCtx, leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Name: "widget-controller", Namespace: ns},
				Client: client.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-1"}},
			LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { close(leading) },
				OnStoppedLeading: func() {},
			},
		})
	}()
	select {
	case <-leading:
	case <-time.After(20 * time.Second):
		t.Fatal("the service account did not become leader")
	}
	stopElection()
	<-done
	lease, err := admin.CoordinationV1().Leases(ns).Get(ctx, "widget-controller", metav1.GetOptions{})
	must(err)
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "replica-1" {
		t.Errorf("lease holder %v, want replica-1", lease.Spec.HolderIdentity)
	}
}
