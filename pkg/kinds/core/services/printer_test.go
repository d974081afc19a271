package services

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCells pins kube's printService columns for each service type (kubectl get svc -o wide).
func TestCells(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-90 * time.Second))
	ports := []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP}}
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		lb   []corev1.LoadBalancerIngress
		want []any
	}{
		{"cluster IP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.10"}, Ports: ports[:1], Selector: map[string]string{"app": "web"}},
			nil, []any{"s", "ClusterIP", "10.0.0.10", "<none>", "80/TCP", "90s", "app=web"}},
		{"node port with external IPs", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.0.0.11"}, ExternalIPs: []string{"192.0.2.1", "192.0.2.2"}, Ports: ports},
			nil, []any{"s", "NodePort", "10.0.0.11", "192.0.2.1,192.0.2.2", "80/TCP,53:30053/UDP", "90s", "<none>"}},
		{"load balancer pending", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.12"}},
			nil, []any{"s", "LoadBalancer", "10.0.0.12", "<pending>", "<none>", "90s", "<none>"}},
		{"load balancer ingress, sorted and unique", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.12"}},
			[]corev1.LoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}, {IP: "203.0.113.9"}},
			[]any{"s", "LoadBalancer", "10.0.0.12", "203.0.113.9,lb.example.com", "<none>", "90s", "<none>"}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
			nil, []any{"s", "ExternalName", "<none>", "db.example.com", "<none>", "90s", "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created}, Spec: tt.spec}
			s.Status.LoadBalancer.Ingress = tt.lb
			got := cells(s, now)
			if len(got) != len(tt.want) {
				t.Fatalf("cells %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("cell %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
