package apiserver

import (
	"context"
	"io"
	"net/http"
	"sync"

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

// loopback serves a client's requests in-process, as loopbackUser, without a listener or the
// filters: the hooks and controllers write through the same rules (defaults, validation,
// managedFields) as every client. Responses stream, so watches (and client-go informers) work.
type loopback struct {
	handler http.Handler
	// until, when set, ends every request when it ends (boundTo).
	until context.Context
}

// boundTo returns the loopback with every request ended when ctx ends, for clients of libraries that
// send theirs with context.TODO (component-helpers' RBAC reconciliation). Such a request, waiting for
// an etcd that does not answer, would otherwise outlive the server's stop, and the shutdown that
// waits for its goroutine would never end.
func (l *loopback) boundTo(ctx context.Context) *loopback {
	return &loopback{handler: l.handler, until: ctx}
}

// newLoopback serves the resource routes of api alone: the hooks that start before the server's
// live API is of use (bootstrap RBAC, service accounts, CRDs) need nothing else.
func newLoopback(api *routes.API, resources serve.ResourceHandler) (*loopback, error) {
	m, err := routes.NewMatcher(routes.Install(api, routes.InstallOptions{}))
	if err != nil {
		return nil, err
	}
	return &loopback{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		match := m.Match(r.Method, r.URL.Path)
		if match.Route == nil || match.Route.Endpoint != "" {
			serve.NotFound(w, r)
			return
		}
		resources.ServeResource(w, r, match.Route, match.Params)
	})}, nil
}

// config is a client configuration that sends every request to the loopback. Its clients drop the
// warnings the server answers with, as kube-controller-manager's do: the controllers of Endpoints
// would otherwise log "v1 Endpoints is deprecated" at every write.
func (l *loopback) config() *rest.Config {
	return &rest.Config{Host: "http://loopback", Transport: l,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}, UserAgent: "apictl-loopback", QPS: -1,
		WarningHandler: rest.NoWarnings{}}
}

// The loopback hands out clients of single groups where it can, not client-go's whole Clientset:
// importing that links in every group's typed client, and building one touches their code at every
// start (+5 MiB of resident memory at idle, measured against a binary with only the typed clients
// below). kube's admission plugins and the controllers built on client-go need the Clientset;
// clients.go builds it once for all of them.

// rbacClient is a typed rbac.authorization.k8s.io/v1 client over the loopback.
func (l *loopback) rbacClient() (*rbacv1client.RbacV1Client, error) {
	return rbacv1client.NewForConfig(l.config())
}

// coreClient is a typed core v1 client over the loopback.
func (l *loopback) coreClient() (*corev1client.CoreV1Client, error) {
	return corev1client.NewForConfig(l.config())
}

// RoundTrip serves req in a goroutine and answers as soon as the handler has written its header;
// the body streams through a pipe until the handler returns. Closing the body cancels the
// request's context, which ends a watch.
func (l *loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := func() bool { return false }
	if l.until != nil {
		stop = context.AfterFunc(l.until, cancel)
	}
	u := loopbackUser
	ctx = request.WithUser(ctx, &u)
	r := req.WithContext(ctx)
	ctx = request.WithRequestInfo(ctx, request.NewRequestInfo(r))
	r = r.WithContext(ctx)
	pr, pw := io.Pipe()
	w := &streamWriter{header: http.Header{}, code: http.StatusOK, started: make(chan struct{}), body: pw}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stop()
		defer func() {
			if req.Body != nil {
				req.Body.Close()
			}
			w.start()
			pw.Close()
		}()
		l.handler.ServeHTTP(w, r)
	}()
	select {
	case <-w.started:
	case <-req.Context().Done():
		cancel()
		pr.Close()
		<-done
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: w.code, Status: http.StatusText(w.code), Header: w.sent,
		Body: &streamBody{PipeReader: pr, cancel: cancel}, ContentLength: -1, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// streamWriter is the handler's side of one loopback response. The header is frozen when the
// handler first writes (or returns); the client reads the body through the pipe.
type streamWriter struct {
	header  http.Header
	sent    http.Header // the header as the handler first wrote it, what the client sees
	code    int
	once    sync.Once
	started chan struct{}
	body    *io.PipeWriter
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) start() {
	w.once.Do(func() {
		w.sent = w.header.Clone()
		close(w.started)
	})
}

func (w *streamWriter) WriteHeader(code int) {
	select {
	case <-w.started:
	default:
		w.code = code
		w.start()
	}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush is a no-op: the pipe hands every write to the reader as it is made.
func (w *streamWriter) Flush() {}

// streamBody ends the request when the client closes the body.
type streamBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *streamBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}
