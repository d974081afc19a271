package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/internal/servertest"
)

// BenchmarkAPFStarvation is issue 35's APF must-show: 8 clients flood unpaged LISTs of every
// ConfigMap through a FlowSchema that sends them to kube's workload-low level, while the timed client
// reads one ConfigMap at a time through workload-high. It reports the reader's p50 and p99 with
// priority and fairness on, and off (the max-in-flight limits alone). APF_BENCH_OBJECTS sets how many
// ConfigMaps there are (default 20,000; the figure is 100,000).
//
//	APF_BENCH_OBJECTS=100000 go test ./pkg/apiserver -run '^$' -bench APFStarvation -benchtime 2000x
func BenchmarkAPFStarvation(b *testing.B) {
	objects := 20_000
	if v := os.Getenv("APF_BENCH_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("APF_BENCH_OBJECTS=%q: want a positive number", v)
		}
		objects = n
	}
	for _, apf := range []bool{true, false} {
		b.Run(fmt.Sprintf("apf=%t", apf), func(b *testing.B) {
			srv := servertest.Start(b, "--enable-priority-and-fairness="+strconv.FormatBool(apf))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := rest.CopyConfig(srv.AdminConfig)
			cfg.QPS = -1 // no client-side rate limit: the seeding would take minutes at client-go's 5 per second
			client := kubernetes.NewForConfigOrDie(cfg)
			starvationSetUp(ctx, b, client, objects)
			httpClient, err := srv.HTTPClient()
			if err != nil {
				b.Fatal(err)
			}
			get := func(ctx context.Context, user, path string) error {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.SecureURL+path, nil)
				if err != nil {
					return err
				}
				req.Header.Set("Impersonate-User", user)
				resp, err := httpClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(io.Discard, resp.Body)
				return err
			}
			flood, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for flood.Err() == nil {
						_ = get(flood, "flooder", "/api/v1/configmaps") // 429s and cut lists are the flood's lot
					}
				})
			}
			time.Sleep(time.Second) // the flood is under way before the reader is timed
			latencies := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				began := time.Now()
				if err := get(ctx, "reader", fmt.Sprintf("/api/v1/namespaces/default/configmaps/apf-%06d", i%objects)); err != nil {
					b.Fatal(err)
				}
				latencies = append(latencies, time.Since(began))
			}
			b.StopTimer()
			stop()
			wg.Wait()
			slices.Sort(latencies)
			at := func(p int) float64 {
				return float64(latencies[min(len(latencies)-1, len(latencies)*p/100)].Microseconds()) / 1000
			}
			b.ReportMetric(at(50), "p50-ms")
			b.ReportMetric(at(99), "p99-ms")
		})
	}
}

// starvationSetUp seeds the ConfigMaps, lets the flooder and the reader read everything, and sends
// the flooder to workload-low and the reader to workload-high, kube's bootstrap levels.
func starvationSetUp(ctx context.Context, b *testing.B, client kubernetes.Interface, objects int) {
	b.Helper()
	for _, user := range []string{"flooder", "reader"} {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "apf-bench-" + user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
		if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i, fs := range []struct{ user, level string }{{"flooder", "workload-low"}, {"reader", "workload-high"}} {
		schema := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "apf-bench-" + fs.user},
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: fs.level},
				MatchingPrecedence: int32(500 + i), DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
				Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
					Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: fs.user}}},
					ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
						Namespaces: []string{"*"}, ClusterScope: true}},
				}}}}
		if _, err := client.FlowcontrolV1().FlowSchemas().Create(ctx, schema, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	names := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 16 {
		wg.Go(func() {
			for i := range names {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("apf-%06d", i)},
					Data: map[string]string{"payload": strings.Repeat("x", 400)}}
				if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range objects {
		names <- i
	}
	close(names)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatalf("seeding the ConfigMaps: %v", err)
	default:
	}
}
