package apiserver

import (
	"bytes"
	"io"
	"net/http"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve"
	"github.com/apictl/apictl/pkg/serve/request"
)

// loopbackUser is who the server's own hooks and controllers act as: kube's loopback identity, a
// member of system:masters.
var loopbackUser = request.User{Name: "system:apiserver", Groups: []string{request.GroupMasters, request.GroupAuthenticated}}

// loopback serves a client's requests in-process through the resource handlers, as loopbackUser,
// without a listener or the filters: the hooks and controllers write through the same rules
// (defaults, validation, managedFields) as every client. It serves single requests, not watches.
type loopback struct {
	matcher   *routes.Matcher
	resources serve.ResourceHandler
}

func newLoopback(api *routes.API, resources serve.ResourceHandler) (*loopback, error) {
	m, err := routes.NewMatcher(routes.Install(api, routes.InstallOptions{}))
	if err != nil {
		return nil, err
	}
	return &loopback{matcher: m, resources: resources}, nil
}

// config is a client configuration that sends every request to the loopback.
func (l *loopback) config() *rest.Config {
	return &rest.Config{Host: "http://loopback", Transport: l,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}, UserAgent: "apictl-loopback", QPS: -1}
}

// The loopback hands out clients of single groups, never client-go's whole Clientset: importing that
// links in every group's typed client, and building one touches their code at every start (+5 MiB of
// resident memory at idle, measured against a binary with only the typed clients below).

// rbacClient is a typed rbac.authorization.k8s.io/v1 client over the loopback.
func (l *loopback) rbacClient() (*rbacv1client.RbacV1Client, error) {
	return rbacv1client.NewForConfig(l.config())
}

// coreClient is a typed core v1 client over the loopback.
func (l *loopback) coreClient() (*corev1client.CoreV1Client, error) {
	return corev1client.NewForConfig(l.config())
}

// RoundTrip answers req from the handlers.
func (l *loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	m := l.matcher.Match(req.Method, req.URL.Path)
	if m.Route == nil || m.Route.Endpoint != "" {
		serve.NotFound(rec, req)
	} else {
		u := loopbackUser
		ctx := request.WithUser(req.Context(), &u)
		ctx = request.WithRequestInfo(ctx, request.NewRequestInfo(req))
		l.resources.ServeResource(rec, req.WithContext(ctx), m.Route, m.Params)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: rec.code, Status: http.StatusText(rec.code), Header: rec.header,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// recorder is the response of one loopback request.
type recorder struct {
	header      http.Header
	code        int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
