package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"

	"github.com/apictl/apictl/pkg/routes"
)

// objectServer is the smallest API server kubectl's write commands work against: discovery of the
// test API, and GET, POST and PATCH of objects kept in memory, with this package doing every patch
// and the ownership bookkeeping of creates. It notes each write it receives, so that tests show
// what kubectl sends.
type objectServer struct {
	*httptest.Server
	patcher *Patcher
	api     *routes.API
	disc    *routes.Discovery
	// matcher routes requests with the server's own route table.
	matcher *routes.Matcher

	mu      sync.Mutex
	objects map[string]runtime.Object
	rv      int
	writes  []string
}

func newObjectServer(t *testing.T) *objectServer {
	api := testAPI(t)
	matcher, err := routes.NewMatcher(routes.Install(api, routes.InstallOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	s := &objectServer{
		patcher: testPatcher(t),
		api:     api,
		disc:    routes.NewDiscovery(api, routes.DiscoveryOptions{}),
		matcher: matcher,
		objects: map[string]runtime.Object{},
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// takeWrites returns the writes noted since the last call.
func (s *objectServer) takeWrites() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.writes
	s.writes = nil
	return w
}

func (s *objectServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := s.matcher.Match(r.Method, r.URL.Path)
	route := m.Route
	switch {
	case route == nil:
		sendError(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	case route.Endpoint == routes.EndpointAPIVersions:
		sendJSON(w, http.StatusOK, s.disc.APIVersions)
	case route.Endpoint == routes.EndpointAPIGroupList:
		sendJSON(w, http.StatusOK, &s.disc.GroupList)
	case route.Endpoint == routes.EndpointAPIGroup:
		sendJSON(w, http.StatusOK, s.disc.Groups[route.Group])
	case route.Endpoint == routes.EndpointAPIResourceList:
		sendJSON(w, http.StatusOK, s.disc.ResourceLists[route.GroupVersion()])
	case route.Action == routes.ActionGet || route.Action == routes.ActionPost || route.Action == routes.ActionPatch:
		target := Target{Resource: route.GroupVersion().WithResource(route.Resource), Subresource: route.Subresource}
		s.serveObject(w, r, target, m.Params.Namespace, m.Params.Name)
	default:
		sendError(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: route.Group, Resource: route.Resource}, r.Method))
	}
}

// objectRequest is one request for an object.
type objectRequest struct {
	target          Target
	namespace, name string
	body            []byte
}

func (o objectRequest) key(name string) string {
	return o.target.Resource.GroupResource().String() + "/" + o.namespace + "/" + name
}

func (s *objectServer) serveObject(w http.ResponseWriter, r *http.Request, target Target, namespace, name string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		sendError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	o := objectRequest{target: target, namespace: namespace, name: name, body: body}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		obj, ok := s.objects[o.key(name)]
		if !ok || name == "" {
			sendError(w, apierrors.NewNotFound(target.Resource.GroupResource(), name))
			return
		}
		sendJSON(w, http.StatusOK, s.served(target, obj))
	case http.MethodPost:
		s.writes = append(s.writes, fmt.Sprintf("POST %s fieldManager=%s", r.URL.Path, r.URL.Query().Get("fieldManager")))
		s.create(w, r, o)
	case http.MethodPatch:
		line := fmt.Sprintf("PATCH %s %s fieldManager=%s", r.URL.Path, r.Header.Get("Content-Type"), r.URL.Query().Get("fieldManager"))
		if r.URL.Query().Has("force") {
			line += " force=" + r.URL.Query().Get("force")
		}
		s.writes = append(s.writes, line)
		s.patch(w, r, o)
	default:
		sendError(w, apierrors.NewMethodNotSupported(target.Resource.GroupResource(), r.Method))
	}
}

// create answers a POST: the body becomes an object whose creation Update records.
func (s *objectServer) create(w http.ResponseWriter, r *http.Request, o objectRequest) {
	tg, err := s.patcher.target(o.target)
	if err != nil {
		sendError(w, err)
		return
	}
	obj := tg.newObject()
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(o.body, obj); err != nil {
		sendError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	name := obj.(metav1.Object).GetName()
	if _, exists := s.objects[o.key(name)]; exists {
		sendError(w, apierrors.NewAlreadyExists(o.target.Resource.GroupResource(), name))
		return
	}
	obj, err = s.patcher.Update(o.target, nil, obj, Manager(r.URL.Query().Get("fieldManager"), r.UserAgent()))
	if err != nil {
		sendError(w, err)
		return
	}
	s.store(o.key(name), obj, o.namespace, true)
	sendJSON(w, http.StatusCreated, s.served(o.target, obj))
}

// patch answers a PATCH with Patcher.Patch, creating the object when an apply says so.
func (s *objectServer) patch(w http.ResponseWriter, r *http.Request, o objectRequest) {
	q := r.URL.Query()
	typ, err := s.patcher.ParseType(o.target, r.Header.Get("Content-Type"))
	if err != nil {
		sendError(w, err)
		return
	}
	req := Request{Target: o.target, Type: typ, Namespace: o.namespace, Name: o.name, Patch: o.body, UserAgent: r.UserAgent(),
		Options: metav1.PatchOptions{FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}}
	if q.Has("force") {
		force := q.Get("force") == "true"
		req.Options.Force = &force
	}
	current := s.objects[o.key(o.name)]
	res, err := s.patcher.Patch(current, req)
	if err != nil {
		sendError(w, err)
		return
	}
	// A patch that sets resourceVersion makes it a precondition, as kube's store does.
	if current != nil && res.Object.(metav1.Object).GetResourceVersion() != current.(metav1.Object).GetResourceVersion() {
		sendError(w, apierrors.NewConflict(o.target.Resource.GroupResource(), o.name, errors.New("the object has been modified")))
		return
	}
	s.store(o.key(o.name), res.Object, o.namespace, res.Created)
	code := http.StatusOK
	if res.Created {
		code = http.StatusCreated
	}
	for _, warning := range res.Warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", warning))
	}
	sendJSON(w, code, s.served(o.target, res.Object))
}

// store keeps obj as the registry and storage would: a uid and creation time when it is new, a
// new resourceVersion on every write.
func (s *objectServer) store(key string, obj runtime.Object, namespace string, created bool) {
	m, _ := meta.Accessor(obj)
	if created {
		m.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", len(s.objects)+1)))
		m.SetCreationTimestamp(metav1.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
		m.SetNamespace(namespace)
	}
	s.rv++
	m.SetResourceVersion(fmt.Sprint(s.rv))
	ageManagedFields(obj)
	s.objects[key] = obj
}

// served is obj as a GET returns it; subresources other than status are not served here.
func (s *objectServer) served(target Target, obj runtime.Object) runtime.Object {
	if res, ok := s.api.Resource(target.Resource.Group, target.Resource.Version, target.Resource.Resource); ok {
		obj.GetObjectKind().SetGroupVersionKind(target.Resource.GroupVersion().WithKind(res.Kind))
	}
	return obj
}

func sendJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func sendError(w http.ResponseWriter, err error) {
	status := apierrors.NewInternalError(err).Status()
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	}
	status.Kind, status.APIVersion = "Status", "v1"
	sendJSON(w, int(status.Code), status)
}

// The server must keep serving what the scripts use: every resource kubectl can name is one the
// Patcher handles.
func TestObjectServerCoversTheAPI(t *testing.T) {
	s := newObjectServer(t)
	for gv, list := range s.disc.ResourceLists {
		for _, r := range list.APIResources {
			resource, sub, _ := strings.Cut(r.Name, "/")
			target := Target{Resource: gv.WithResource(resource), Subresource: sub}
			if accepted := s.patcher.Accepted(target); !slices.Contains(accepted, types.MergePatchType) {
				t.Errorf("discovery lists %s, which the Patcher does not take", target)
			}
		}
	}
}
