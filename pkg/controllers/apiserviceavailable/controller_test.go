package apiserviceavailable

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	aggfake "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
	agginformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"
	"k8s.io/utils/ptr"
)

// staticResolver resolves every service to one URL.
type staticResolver struct{ u string }

func (r staticResolver) ResolveEndpoint(_, _ string, _ int32) (*url.URL, error) {
	return url.Parse(r.u)
}

func remote(name, group string) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: "v1", GroupPriorityMinimum: 100, VersionPriority: 10,
			InsecureSkipTLSVerify: true, Service: &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "api", Port: ptr.To[int32](443)}}}
}

func service(typ corev1.ServiceType, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api"},
		Spec: corev1.ServiceSpec{Type: typ, Ports: []corev1.ServicePort{{Name: "https", Port: port}}}}
}

func slice(portName string, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api-1",
		Labels: map[string]string{discoveryv1.LabelServiceName: "api"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.9"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: ptr.To[int32](8443)}}}
}

// clientPair mints a self-signed client certificate for the front proxy.
func clientPair(t *testing.T) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "front-proxy-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// backend is an extension API server's stand-in that records who asked.
type backend struct {
	*httptest.Server
	mu       sync.Mutex
	status   int
	user     string
	groups   []string
	clientCN string
	path     string
}

func newBackend(t *testing.T) *backend {
	b := &backend{status: http.StatusOK}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.user, b.groups, b.path = r.Header.Get("X-Remote-User"), r.Header.Values("X-Remote-Group"), r.URL.Path
		if len(r.TLS.PeerCertificates) > 0 {
			b.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		w.WriteHeader(b.status)
	}))
	b.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	b.StartTLS()
	t.Cleanup(b.Close)
	return b
}

func TestConditions(t *testing.T) {
	be := newBackend(t)
	cert, key := clientPair(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := "https://" + closed.Listener.Addr().String()
	closed.Close()
	tests := []struct {
		name        string
		apiService  *apiregistrationv1.APIService
		objects     []runtime.Object
		resolver    string // "" uses the backend
		status      int
		want        apiregistrationv1.ConditionStatus
		reason      string
		message     string // a prefix
		wantErr     bool
		wantChecked bool
	}{
		{name: "local", apiService: &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"},
			Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}},
			want: apiregistrationv1.ConditionTrue, reason: "Local", message: "Local APIServices are always available"},
		{name: "service missing", apiService: remote("v1.example.com", "example.com"),
			want: apiregistrationv1.ConditionFalse, reason: "ServiceNotFound", message: `service/api in "ns" is not present`},
		{name: "service not on the port", apiService: remote("v1.example.com", "example.com"), objects: []runtime.Object{service(corev1.ServiceTypeClusterIP, 8443)},
			want: apiregistrationv1.ConditionFalse, reason: "ServicePortError", message: `service/api in "ns" is not listening on port 443`},
		{name: "no endpointslices", apiService: remote("v1.example.com", "example.com"), objects: []runtime.Object{service(corev1.ServiceTypeClusterIP, 443)},
			want: apiregistrationv1.ConditionFalse, reason: "EndpointsNotFound", message: `cannot find endpointslices for service/api in "ns"`},
		{name: "no ready endpoint", apiService: remote("v1.example.com", "example.com"),
			objects: []runtime.Object{service(corev1.ServiceTypeClusterIP, 443), slice("https", false)},
			want:    apiregistrationv1.ConditionFalse, reason: "MissingEndpoints", message: `endpointslices for service/api in "ns" have no addresses with port name "https"`},
		{name: "no endpoint port of the name", apiService: remote("v1.example.com", "example.com"),
			objects: []runtime.Object{service(corev1.ServiceTypeClusterIP, 443), slice("other", true)},
			want:    apiregistrationv1.ConditionFalse, reason: "MissingEndpoints", message: `endpointslices for service/api in "ns" have no addresses with port name "https"`},
		{name: "cluster IP service passes", apiService: remote("v1.example.com", "example.com"),
			objects: []runtime.Object{service(corev1.ServiceTypeClusterIP, 443), slice("https", true)},
			want:    apiregistrationv1.ConditionTrue, reason: "Passed", message: "all checks passed", wantChecked: true},
		// ExternalName services skip the endpoint checks, as in kube.
		{name: "external name service passes", apiService: remote("v1.example.com", "example.com"),
			objects: []runtime.Object{service(corev1.ServiceTypeExternalName, 9999)},
			want:    apiregistrationv1.ConditionTrue, reason: "Passed", message: "all checks passed", wantChecked: true},
		{name: "backend refuses", apiService: remote("v1.example.com", "example.com"), status: http.StatusForbidden,
			objects: []runtime.Object{service(corev1.ServiceTypeExternalName, 443)},
			want:    apiregistrationv1.ConditionFalse, reason: "FailedDiscoveryCheck",
			message: "failing or missing response from " + be.URL + "/apis/example.com/v1: bad status from " + be.URL + "/apis/example.com/v1: 403",
			wantErr: true, wantChecked: true},
		{name: "backend down", apiService: remote("v1.example.com", "example.com"), resolver: closedURL,
			objects: []runtime.Object{service(corev1.ServiceTypeExternalName, 443)},
			want:    apiregistrationv1.ConditionFalse, reason: "FailedDiscoveryCheck",
			message: "failing or missing response from " + closedURL + "/apis/example.com/v1: Get \"" + closedURL + "/apis/example.com/v1\": dial tcp",
			wantErr: true},
		{name: "legacy core group delegated", apiService: func() *apiregistrationv1.APIService {
			s := remote("v1.", "")
			return s
		}(), objects: []runtime.Object{service(corev1.ServiceTypeExternalName, 443)},
			want: apiregistrationv1.ConditionTrue, reason: "Passed", message: "all checks passed", wantChecked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			be.mu.Lock()
			be.status, be.user, be.path = http.StatusOK, "", ""
			if tt.status != 0 {
				be.status = tt.status
			}
			be.mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			agg := aggfake.NewClientset(tt.apiService)
			kube := kubefake.NewClientset(tt.objects...)
			aggInf, kubeInf := agginformers.NewSharedInformerFactory(agg, 0), informers.NewSharedInformerFactory(kube, 0)
			resolverURL := be.URL
			if tt.resolver != "" {
				resolverURL = tt.resolver
			}
			c, err := New(Config{APIServices: aggInf.Apiregistration().V1().APIServices(), Services: kubeInf.Core().V1().Services(),
				EndpointSlices: kubeInf.Discovery().V1().EndpointSlices(), Client: agg.ApiregistrationV1(),
				Resolver: staticResolver{resolverURL}, ProxyClientCert: func() ([]byte, []byte) { return cert, key },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			aggInf.Start(ctx.Done())
			kubeInf.Start(ctx.Done())
			defer func() { cancel(); aggInf.Shutdown(); kubeInf.Shutdown() }()
			if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
				t.Fatal("informers did not sync")
			}
			remote, err := c.sync(ctx, tt.apiService.Name)
			if (err != nil) != tt.wantErr {
				t.Fatalf("sync error = %v, want an error: %v", err, tt.wantErr)
			}
			if remote != (tt.apiService.Spec.Service != nil) {
				t.Errorf("remote = %v", remote)
			}
			got, err := agg.ApiregistrationV1().APIServices().Get(ctx, tt.apiService.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cond := helper.GetAPIServiceConditionByType(got, apiregistrationv1.Available)
			if cond == nil {
				t.Fatal("no Available condition")
			}
			if cond.Status != tt.want || cond.Reason != tt.reason || !strings.HasPrefix(cond.Message, tt.message) {
				t.Errorf("condition = %s/%s %q, want %s/%s %q", cond.Status, cond.Reason, cond.Message, tt.want, tt.reason, tt.message)
			}
			if cond.LastTransitionTime.IsZero() {
				t.Error("no lastTransitionTime")
			}
			be.mu.Lock()
			defer be.mu.Unlock()
			if !tt.wantChecked {
				return
			}
			// kube's identity for the check: system:kube-aggregator in system:masters, with the front-proxy certificate.
			if be.user != "system:kube-aggregator" || len(be.groups) != 1 || be.groups[0] != "system:masters" || be.clientCN != "front-proxy-client" {
				t.Errorf("the backend saw user %q groups %v certificate %q", be.user, be.groups, be.clientCN)
			}
			wantPath := "/apis/" + tt.apiService.Spec.Group + "/v1"
			if tt.apiService.Name == "v1." {
				wantPath = "/api/v1"
			}
			if be.path != wantPath {
				t.Errorf("the backend was asked for %s, want %s", be.path, wantPath)
			}
		})
	}
}

// TestWritesOnlyChanges: a re-check that finds the same condition writes nothing, and the status
// goes through the status subresource.
func TestWritesOnlyChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	local := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"},
		Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}}
	agg := aggfake.NewClientset(local)
	kube := kubefake.NewClientset()
	aggInf, kubeInf := agginformers.NewSharedInformerFactory(agg, 0), informers.NewSharedInformerFactory(kube, 0)
	c, err := New(Config{APIServices: aggInf.Apiregistration().V1().APIServices(), Services: kubeInf.Core().V1().Services(),
		EndpointSlices: kubeInf.Discovery().V1().EndpointSlices(), Client: agg.ApiregistrationV1(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Recheck: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	aggInf.Start(ctx.Done())
	kubeInf.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx, 2) })
	defer func() { cancel(); wg.Wait(); aggInf.Shutdown(); kubeInf.Shutdown() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1.apps", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if got != nil && helper.IsAPIServiceConditionTrue(got, apiregistrationv1.Available) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the local apiservice never became available")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A status write comes back as an update event: it must not cause another write.
	time.Sleep(300 * time.Millisecond)
	var writes []string
	for _, a := range agg.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "patch" || a.GetVerb() == "create" {
			writes = append(writes, a.GetVerb()+"/"+a.GetSubresource())
		}
	}
	if len(writes) != 1 || writes[0] != "update/status" {
		t.Errorf("writes = %v, want one update/status", writes)
	}
}

func TestTransportConfig(t *testing.T) {
	s := remote("v1.example.com", "example.com")
	s.Spec.InsecureSkipTLSVerify = false
	s.Spec.CABundle = []byte("bundle")
	tc := TransportConfig(s, []byte("cert"), []byte("key"))
	if tc.TLS.ServerName != "api.ns.svc" || tc.TLS.Insecure || string(tc.TLS.CAData) != "bundle" ||
		string(tc.TLS.CertData) != "cert" || string(tc.TLS.KeyData) != "key" {
		t.Errorf("transport config = %+v", tc.TLS)
	}
}
