package registry

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// decodeDefaulted decodes body as the handlers do: into the kind's type, then its decoding defaults.
func decodeDefaulted(t *testing.T, s *Strategy, body string) runtime.Object {
	t.Helper()
	obj := s.New()
	if err := json.Unmarshal([]byte(body), obj); err != nil {
		t.Fatal(err)
	}
	s.Default(obj)
	if err := s.PrepareForCreate(obj, time.Now()); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestServiceValidation holds kube-apiserver v1.37.2's messages (recorded in
// test/differential/testdata/golden/77-services.json, and asked of the reference for the rest).
func TestServiceValidation(t *testing.T) {
	s := strategy(t, "", "services")
	tests := []struct {
		name, body string
		want       []string // substrings of the Invalid message, in order; none means valid
	}{
		{"defaults suffice", `{"metadata":{"name":"web","namespace":"d"},"spec":{"ports":[{"port":80}]}}`, nil},
		{"headless needs no ports", `{"metadata":{"name":"h","namespace":"d"},"spec":{"clusterIP":"None"}}`, nil},
		{"external name needs no ports", `{"metadata":{"name":"e","namespace":"d"},"spec":{"type":"ExternalName","externalName":"a.example.com."}}`, nil},
		{"ports required", `{"metadata":{"name":"p","namespace":"d"},"spec":{"selector":{"a":"b"}}}`,
			[]string{`Service "p" is invalid: spec.ports: Required value`}},
		{"names are DNS-1123 labels", `{"metadata":{"name":"a.b","namespace":"d"},"spec":{"ports":[{"port":80}]}}`,
			[]string{`Service "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`}},
		{"ports, all errors at once", `{"metadata":{"name":"p","namespace":"d"},"spec":{"type":"Weird","sessionAffinity":"X","ports":[{"port":0,"protocol":"ICMP"},{"port":80,"name":"a","targetPort":"bad_name"},{"port":80,"name":"a"}]}}`,
			[]string{`spec.ports[0].name: Required value`, `spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
				`spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
				`spec.ports[1].targetPort: Invalid value: "bad_name"`, `spec.ports[2].name: Duplicate value: "a"`,
				`spec.sessionAffinity: Unsupported value: "X": supported values: "ClientIP", "None"`,
				`spec.type: Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`,
				`spec.ports[2]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}`}},
		{"cluster IPs first and alone", `{"metadata":{"name":"Bad.Name","namespace":"d"},"spec":{"type":"Weird","clusterIP":"10.0.0.60","clusterIPs":["10.0.0.61","1.2.3"],"ipFamilies":["IPv5"],"ipFamilyPolicy":"Single","ports":[{"port":0}]}}`,
			[]string{"spec.clusterIPs: Invalid value: [\"10.0.0.61\",\"1.2.3\"]: first value must match `clusterIP`",
				`spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"`,
				`spec.ipFamilyPolicy: Unsupported value: "Single": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"`,
				`spec.clusterIPs[1]: Invalid value: "1.2.3": must be a valid IP address`}},
		{"external name", `{"metadata":{"name":"e","namespace":"d"},"spec":{"type":"ExternalName","externalName":"-bad-","clusterIP":"10.0.0.7","ipFamilyPolicy":"SingleStack"}}`,
			[]string{`spec.clusterIPs: Forbidden: may not be set for ExternalName services`, `spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services`,
				`spec.externalName: Invalid value: "-bad-": a lowercase RFC 1123 subdomain`}},
		{"external name required", `{"metadata":{"name":"e","namespace":"d"},"spec":{"type":"ExternalName"}}`,
			[]string{`spec.externalName: Required value`}},
		{"headless node port", `{"metadata":{"name":"n","namespace":"d"},"spec":{"type":"NodePort","clusterIP":"None","ports":[{"port":80}]}}`,
			[]string{`spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services`}},
		{"node port on ClusterIP", `{"metadata":{"name":"n","namespace":"d"},"spec":{"ports":[{"port":80,"nodePort":30001}]}}`,
			[]string{"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
		{"external IPs", `{"metadata":{"name":"x","namespace":"d"},"spec":{"ports":[{"port":80}],"externalIPs":["127.0.0.1","169.254.0.1","nonsense"]}}`,
			[]string{`spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
				`spec.externalIPs[1]: Invalid value: "169.254.0.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)`,
				`spec.externalIPs[2]: Invalid value: "nonsense": must be a valid IP address`}},
		{"selector labels", `{"metadata":{"name":"x","namespace":"d"},"spec":{"ports":[{"port":80}],"selector":{"bad key!":"v"}}}`,
			[]string{`spec.selector: Invalid value: "bad key!": name part must consist of alphanumeric characters`}},
		{"traffic policy only when externally accessible", `{"metadata":{"name":"x","namespace":"d"},"spec":{"ports":[{"port":80}],"externalTrafficPolicy":"Local"}}`,
			[]string{`spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services`}},
		{"client IP affinity timeout", `{"metadata":{"name":"x","namespace":"d"},"spec":{"ports":[{"port":80}],"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":0}}}}`,
			[]string{`spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ValidateCreate(decodeDefaulted(t, s, tt.body))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tt.want)
			}
			msg, at := err.Error(), 0
			for _, w := range tt.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %s\nlacks (in order) %s", msg, w)
				}
				at += i + len(w)
			}
		})
	}
}

// TestServiceDefaults are kube's SetDefaults_Service and the strategy's create rules.
func TestServiceDefaults(t *testing.T) {
	s := strategy(t, "", "services")
	svc := decodeDefaulted(t, s, `{"metadata":{"name":"web","namespace":"d"},"spec":{"type":"LoadBalancer","clusterIP":"10.0.0.9",
		"sessionAffinity":"ClientIP","ports":[{"port":80},{"port":53,"protocol":"UDP","targetPort":"dns"}]},
		"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}}`).(*corev1.Service)
	spec := svc.Spec
	if spec.Ports[0].Protocol != corev1.ProtocolTCP || spec.Ports[0].TargetPort != intstr.FromInt32(80) || spec.Ports[1].TargetPort != intstr.FromString("dns") {
		t.Errorf("ports %+v", spec.Ports)
	}
	if spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || *spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster ||
		!*spec.AllocateLoadBalancerNodePorts || *spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 {
		t.Errorf("spec %+v", spec)
	}
	if len(spec.ClusterIPs) != 1 || spec.ClusterIPs[0] != "10.0.0.9" {
		t.Errorf("clusterIPs %v, want [10.0.0.9]", spec.ClusterIPs)
	}
	if len(svc.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("a create kept the status %+v", svc.Status)
	}
}

// TestServiceUpdate: allocated values a client leaves out are kept, the cluster IP may not change,
// a change to ExternalName drops the cluster IPs and families, and a status write keeps the spec.
func TestServiceUpdate(t *testing.T) {
	s := strategy(t, "", "services")
	single := corev1.IPFamilyPolicySingleStack
	old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "d", UID: "u", ResourceVersion: "5"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.9", ClusterIPs: []string{"10.0.0.9"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: &single, SessionAffinity: corev1.ServiceAffinityNone,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80), NodePort: 30080}}}}

	kept := old.DeepCopy()
	kept.Spec.ClusterIP, kept.Spec.ClusterIPs, kept.Spec.Ports[0].NodePort = "", nil, 0
	if err := s.PrepareForUpdate(kept, old); err != nil {
		t.Fatal(err)
	}
	if kept.Spec.ClusterIP != "10.0.0.9" || len(kept.Spec.ClusterIPs) != 1 || kept.Spec.Ports[0].NodePort != 30080 {
		t.Errorf("allocated values not kept: %+v", kept.Spec)
	}
	if err := s.ValidateUpdate(kept, old); err != nil {
		t.Errorf("refused: %v", err)
	}

	moved := old.DeepCopy()
	moved.Spec.ClusterIP, moved.Spec.ClusterIPs = "10.0.0.10", []string{"10.0.0.10"}
	if err := s.PrepareForUpdate(moved, old); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateUpdate(moved, old); err == nil || !strings.Contains(err.Error(), `spec.clusterIPs[0]: Invalid value: ["10.0.0.10"]: may not change once set`) {
		t.Errorf("error %v", err)
	}

	ext := old.DeepCopy()
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "x.example.com"
	if err := s.PrepareForUpdate(ext, old); err != nil {
		t.Fatal(err)
	}
	if ext.Spec.ClusterIP != "" || ext.Spec.ClusterIPs != nil || ext.Spec.IPFamilies != nil || ext.Spec.IPFamilyPolicy != nil ||
		ext.Spec.Ports[0].NodePort != 0 || ext.Spec.ExternalTrafficPolicy != "" || ext.Spec.InternalTrafficPolicy != nil {
		t.Errorf("type-dependent fields kept: %+v", ext.Spec)
	}
	if err := s.ValidateUpdate(ext, old); err != nil {
		t.Errorf("refused: %v", err)
	}

	status := old.DeepCopy()
	status.Spec.Type = corev1.ServiceTypeClusterIP
	status.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}
	out := s.PrepareForStatusUpdate(status, old).(*corev1.Service)
	if out.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("a status write changed the spec")
	}
	if err := s.ValidateStatusUpdate(out, old); err == nil || !strings.Contains(err.Error(), "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'") {
		t.Errorf("error %v", err)
	}
}

func TestEndpointsValidation(t *testing.T) {
	for _, tt := range []struct {
		resource, body string
		want           []string
	}{
		{"endpoints", `{"metadata":{"name":"web","namespace":"d"},"subsets":[{"addresses":[{"ip":"10.1.0.1"}],"ports":[{"port":80}]}]}`, nil},
		{"endpoints", `{"metadata":{"name":"bad","namespace":"d"},"subsets":[{"addresses":[{"ip":"127.0.0.1"},{"ip":"nope","hostname":"Bad_Host"}],"ports":[{"port":0,"protocol":"ICMP"},{"port":80}]},{"ports":[{"port":80}]}]}`,
			[]string{`subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
				`subsets[0].addresses[1].ip: Invalid value: "nope": must be a valid IP address`,
				`subsets[0].addresses[1].hostname: Invalid value: "Bad_Host"`,
				`subsets[0].ports[0].name: Required value`, `subsets[0].ports[0].port: Invalid value: 0`,
				`subsets[0].ports[0].protocol: Unsupported value: "ICMP"`, `subsets[0].ports[1].name: Required value`,
				"subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`"}},
		{"endpointslices", `{"metadata":{"name":"web","namespace":"d"},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.1"]}],"ports":[{"port":80}]}`, nil},
		{"endpointslices", `{"metadata":{"name":"bad","namespace":"d"},"addressType":"IPv4","endpoints":[{"addresses":["127.0.0.1","fd00::1","x"]},{"addresses":[]}],"ports":[{"port":80},{"port":81},{"name":"UPPER","protocol":"ICMP"}]}`,
			[]string{`ports[1].name: Duplicate value: ""`, `ports[2].name: Invalid value: "UPPER"`, `ports[2].protocol: Unsupported value: "ICMP"`,
				`endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range`,
				`endpoints[0].addresses: Invalid value: "fd00::1": must be an IPv4 address`,
				`endpoints[0].addresses[2]: Invalid value: "x": must be a valid IP address`, `endpoints[1].addresses: Required value`}},
		{"endpointslices", `{"metadata":{"name":"bad","namespace":"d"},"addressType":"IPv5"}`,
			[]string{`addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"`}},
	} {
		group := ""
		if tt.resource == "endpointslices" {
			group = "discovery.k8s.io"
		}
		t.Run(tt.resource+"/"+tt.body[21:30], func(t *testing.T) {
			s := strategy(t, group, tt.resource)
			err := s.ValidateCreate(decodeDefaulted(t, s, tt.body))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			msg, at := err.Error(), 0
			for _, w := range tt.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error %s\nlacks (in order) %s", msg, w)
				}
				at += i + len(w)
			}
		})
	}
}

// TestEndpointSliceGeneration: 1 on create, one more for a change of endpoints, ports or labels,
// none for other metadata; the address type stays.
func TestEndpointSliceGeneration(t *testing.T) {
	s := strategy(t, "discovery.k8s.io", "endpointslices")
	old := decodeDefaulted(t, s, `{"metadata":{"name":"w","namespace":"d","uid":"u"},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.1"]}],"ports":[{"port":80}]}`).(*discoveryv1.EndpointSlice)
	if old.Generation != 1 || *old.Ports[0].Protocol != corev1.ProtocolTCP || *old.Ports[0].Name != "" {
		t.Fatalf("created %+v", old)
	}
	annotated := old.DeepCopy()
	annotated.Annotations = map[string]string{"a": "b"}
	_ = s.PrepareForUpdate(annotated, old)
	if annotated.Generation != 1 {
		t.Errorf("an annotation moved the generation to %d", annotated.Generation)
	}
	changed := old.DeepCopy()
	changed.Endpoints[0].Addresses = []string{"10.1.0.2"}
	_ = s.PrepareForUpdate(changed, old)
	if changed.Generation != 2 {
		t.Errorf("a changed endpoint left the generation at %d", changed.Generation)
	}
	retyped := changed.DeepCopy()
	retyped.AddressType = discoveryv1.AddressTypeIPv6
	retyped.Endpoints[0].Addresses = []string{"fd00::1"}
	if err := s.ValidateUpdate(retyped, changed); err == nil || !strings.Contains(err.Error(), "addressType: Invalid value: null: field is immutable") {
		t.Errorf("error %v", err)
	}
}

// TestEmptyEndpointSliceListsAreNull: kube answers "endpoints": null and "ports": null for empty
// lists, as its protobuf storage keeps them.
func TestEmptyEndpointSliceListsAreNull(t *testing.T) {
	s := strategy(t, "discovery.k8s.io", "endpointslices")
	obj := decodeDefaulted(t, s, `{"metadata":{"name":"w","namespace":"d"},"addressType":"IPv4","endpoints":[],"ports":[]}`)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"endpoints":null`) || !strings.Contains(string(b), `"ports":null`) {
		t.Errorf("encoded %s, want endpoints and ports null", b)
	}
}

// TestServiceStatusUpdate: a write to services/status keeps the spec and the server's metadata, and
// takes the status and the annotations it carries, as kube does.
func TestServiceStatusUpdate(t *testing.T) {
	s := strategy(t, "", "services")
	old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", UID: "u1", ResourceVersion: "5"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.10", Ports: []corev1.ServicePort{{Port: 80}}}}
	obj := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns", UID: "other", Annotations: map[string]string{"patchedstatus": "true"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}}}
	out := s.PrepareForStatusUpdate(obj, old).(*corev1.Service)
	if out.Annotations["patchedstatus"] != "true" || out.UID != "u1" {
		t.Errorf("metadata %+v, want the written annotation and the stored uid", out.ObjectMeta)
	}
	if out.Spec.ClusterIP != "10.0.0.10" || len(out.Status.LoadBalancer.Ingress) != 1 {
		t.Errorf("spec %+v status %+v, want the stored spec and the written status", out.Spec, out.Status)
	}
}
