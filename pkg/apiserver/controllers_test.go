package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/apictl/apictl/internal/servertest"
	"github.com/apictl/apictl/pkg/flags"
)

// metricSample returns one sample of the server's /metrics ("name{labels}"), or "" when absent.
func metricSample(t *testing.T, s *servertest.Server, sample string) string {
	t.Helper()
	for _, line := range strings.Split(scrape(t, s), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// clusterControllerNames are the controllers registered under the Lease on a default server: all
// that --controllers can name.
var clusterControllerNames = flags.ControllerNames

// runsControllers waits until the server's metrics say it runs the cluster-wide controllers (want
// "1") or not ("0"), and fails if one of them says otherwise.
func runsControllers(t *testing.T, s *servertest.Server, want string) {
	t.Helper()
	eventually(t, "the leader election metric is "+want, func() error {
		if got := metricSample(t, s, `leader_election_master_status{name="apictl-controllers"}`); got != want {
			return fmt.Errorf("leader_election_master_status = %q", got)
		}
		return nil
	})
	eventually(t, "the controllers' metrics are "+want, func() error {
		for _, c := range clusterControllerNames {
			if got := metricSample(t, s, `apictl_controller_running{controller="`+c+`"}`); got != want {
				return fmt.Errorf("apictl_controller_running{controller=%q} = %q", c, got)
			}
		}
		return nil
	})
}

// TestControllersRunOnTheLeaseHolder: of two replicas on one etcd the first holds the Lease and
// runs the cluster-wide controllers; the second is ready without them, its --api-config CRD
// established by the first and served at once; when the first stops gracefully it releases the
// Lease and the second takes over well within the lease duration.
func TestControllersRunOnTheLeaseHolder(t *testing.T) {
	etcd, _ := etcdForTest(t)
	a := servertest.Start(t, "--etcd-servers", etcd)
	runsControllers(t, a, "1")

	manifest := filepath.Join(t.TempDir(), "gadgets.yaml")
	if err := os.WriteFile(manifest, []byte(gadgetsCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	// Ready means its bootstrap CRD is served: the leader has established it.
	b := servertest.Start(t, "--etcd-servers", etcd, "--api-config", manifest)
	resp, err := http.Get(b.InsecureURL + "/apis/example.com/v1/namespaces/default/gadgets")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the non-leader does not serve its --api-config CRD once ready: %v %v", err, resp)
	}
	resp.Body.Close()
	runsControllers(t, b, "0")
	runsControllers(t, a, "1")
	for _, s := range []*servertest.Server{a, b} {
		resp, err := http.Get(s.InsecureURL + "/livez/leaderElection")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("/livez/leaderElection: %v %v", err, resp)
		} else {
			resp.Body.Close()
		}
	}

	for _, c := range []struct {
		s    *servertest.Server
		want string
	}{{a, "[+]cluster-controllers ok (runs: "}, {b, "[+]cluster-controllers ok (runs no cluster-wide controllers: the holder of Lease kube-system/apictl-controllers does)"}} {
		if got := readyzVerbose(t, c.s); !strings.Contains(got, c.want) {
			t.Errorf("/readyz?verbose does not say %q:\n%s", c.want, got)
		}
	}

	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(b.AdminConfig)
	lease, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "apictl-controllers", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if id := *lease.Spec.HolderIdentity; !strings.HasPrefix(id, host+"_") || len(id) != len(host)+1+36 {
		t.Errorf("holderIdentity %q, want the host name, an underscore and a UUID", id)
	}
	if *lease.Spec.LeaseDurationSeconds != 15 {
		t.Errorf("leaseDurationSeconds %d, want 15", *lease.Spec.LeaseDurationSeconds)
	}
	// kube-controller-manager's event on the Lease (verified against kube 1.37.2 with its controller manager).
	events, err := cs.CoreV1().Events("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "reason=LeaderElection"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events.Items {
		found = found || ev.Message == *lease.Spec.HolderIdentity+" became leader" && ev.InvolvedObject.Kind == "Lease" &&
			ev.InvolvedObject.Name == "apictl-controllers" && ev.Source.Component == "apictl"
	}
	if !found {
		t.Errorf("no LeaderElection event says %s became leader: %+v", *lease.Spec.HolderIdentity, events.Items)
	}

	stopped := time.Now()
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	runsControllers(t, b, "1")
	// Released: the retry period (2s, jittered), not the lease duration (15s).
	if took := time.Since(stopped); took > 5*time.Second {
		t.Errorf("the second replica took over %v after the first stopped: the lease was not released", took)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new holder's namespace controller deletes the namespace", func() error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace still there: %v", err)
	})
	// The remote APIService availability controller, started in a term that began after the
	// informers, judges a remote APIService.
	agg := aggregatorclient.NewForConfigOrDie(b.AdminConfig).ApiregistrationV1().APIServices()
	if _, err := agg.Create(ctx, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.remote.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "remote.example.com", Version: "v1", GroupPriorityMinimum: 100, VersionPriority: 10,
			InsecureSkipTLSVerify: true, Service: &apiregistrationv1.ServiceReference{Namespace: "default", Name: "missing", Port: ptr[int32](443)}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new holder sets the remote APIService's availability", func() error {
		s, err := agg.Get(ctx, "v1.remote.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range s.Status.Conditions {
			if c.Type == apiregistrationv1.Available && c.Reason == "ServiceNotFound" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", s.Status.Conditions)
	})
}

// TestLeaderElectOff: with --leader-elect=false the controllers run at once, no Lease is written,
// and there is no leaderElection check; --controllers leaves one out.
func TestLeaderElectOff(t *testing.T) {
	s := servertest.Start(t, "--leader-elect=false", "--controllers", "*,-garbage-collector-controller")
	eventually(t, "the controllers run", func() error {
		for _, c := range clusterControllerNames {
			if c == "garbage-collector-controller" {
				if got := metricSample(t, s, `apictl_controller_running{controller="`+c+`"}`); got != "" {
					return fmt.Errorf("--controllers left %s out, but its metric says %q", c, got)
				}
				continue
			}
			if got := metricSample(t, s, `apictl_controller_running{controller="`+c+`"}`); got != "1" {
				return fmt.Errorf("apictl_controller_running{controller=%q} = %q", c, got)
			}
		}
		return nil
	})
	if got := metricSample(t, s, `leader_election_master_status{name="apictl-controllers"}`); got != "" {
		t.Errorf("leader_election_master_status = %q without leader election", got)
	}
	cs := kubernetes.NewForConfigOrDie(s.AdminConfig)
	if _, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), "apictl-controllers", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lease exists without leader election: %v", err)
	}
	resp, err := http.Get(s.InsecureURL + "/livez/leaderElection")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/livez/leaderElection answers %d without leader election", resp.StatusCode)
	}
}

// TestReadyWithoutTheLease: a replica whose Lease another holder keeps (one that will not come back
// soon) is ready all the same and runs none of the cluster-wide controllers: readiness depends on no
// leader (the local APIServices' availability, which /readyz waits for, is decided on every replica).
func TestReadyWithoutTheLease(t *testing.T) {
	etcd, _ := etcdForTest(t)
	a := servertest.Start(t, "--etcd-servers", etcd, "--leader-elect=false")
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(a.AdminConfig)
	now := metav1.NewMicroTime(time.Now())
	if _, err := cs.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "apictl-controllers"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("elsewhere"), LeaseDurationSeconds: ptr[int32](3600),
			AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	b := servertest.Start(t, "--etcd-servers", etcd)
	for _, path := range []string{"/readyz", "/readyz/autoregister-completion", "/livez/leaderElection"} {
		resp, err := http.Get(b.InsecureURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s answers %d on a replica that does not hold the lease", path, resp.StatusCode)
		}
	}
	time.Sleep(time.Second)
	runsControllers(t, b, "0")
}

// TestLeaderElectNeedsLeases: leader election without the Lease API is refused at start with the fix,
// and --leader-elect=false starts.
func TestLeaderElectNeedsLeases(t *testing.T) {
	_, err := servertest.StartE(context.Background(), t.TempDir(), "--runtime-config", "coordination.k8s.io/v1=false")
	if err == nil || !strings.Contains(err.Error(), "--leader-elect needs the coordination.k8s.io/v1 API") {
		t.Fatalf("start without the Lease API: %v", err)
	}
	servertest.Start(t, "--runtime-config", "coordination.k8s.io/v1=false", "--leader-elect=false")
}

// readyzVerbose returns the server's /readyz?verbose.
func readyzVerbose(t *testing.T, s *servertest.Server) string {
	t.Helper()
	return getBody(t, s.InsecureURL+"/readyz?verbose")
}
