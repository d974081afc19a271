package rbac

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/storage"
)

// Resources of rbac.authorization.k8s.io, as stored.
const (
	ResourceRoles               = "roles"
	ResourceClusterRoles        = "clusterroles"
	ResourceRoleBindings        = "rolebindings"
	ResourceClusterRoleBindings = "clusterrolebindings"
)

// Stores are where Policy reads each kind: the watch caches, so that feeding the index costs etcd
// nothing beyond the caches' own watches.
type Stores struct {
	Roles, ClusterRoles, RoleBindings, ClusterRoleBindings storage.Store
}

// Policy is the cluster's RBAC policy as an index that a watch of each kind keeps current. It is
// read by the authorizer, the escalation checks and the aggregation controller.
type Policy struct {
	current atomic.Pointer[index]
	ready   chan struct{}

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every new index
	objs     *objects
	listened map[string]bool
}

// NewPolicy returns an empty policy: it grants nothing until Run has read every kind.
func NewPolicy() *Policy {
	p := &Policy{ready: make(chan struct{}), changed: make(chan struct{}), objs: newObjects(), listened: map[string]bool{}}
	p.current.Store(buildIndex(p.objs))
	return p
}

// Ready is closed once the index holds every role and binding that existed when Run started.
func (p *Policy) Ready() <-chan struct{} { return p.ready }

// Changed returns a channel that closes at the next new index.
func (p *Policy) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// ClusterRoles returns every ClusterRole of the current index. The objects are shared: callers must
// not change them.
func (p *Policy) ClusterRoles() []*rbacv1.ClusterRole {
	x := p.current.Load()
	out := make([]*rbacv1.ClusterRole, 0, len(x.clusterRoles))
	for _, r := range x.clusterRoles {
		out = append(out, r)
	}
	return out
}

// Holds reports whether the current index has the named ClusterRoles and ClusterRoleBindings.
func (p *Policy) Holds(clusterRoles, clusterRoleBindings []string) bool {
	x := p.current.Load()
	for _, n := range clusterRoles {
		if _, ok := x.clusterRoles[n]; !ok {
			return false
		}
	}
	for _, n := range clusterRoleBindings {
		if _, ok := x.clusterRoleBindings[n]; !ok {
			return false
		}
	}
	return true
}

// RulesFor returns every rule that applies to u in namespace ("" for the cluster scope) and the errors
// met resolving the roles that grant them.
func (p *Policy) RulesFor(u *request.User, namespace string) ([]rbacv1.PolicyRule, []error) {
	return p.current.Load().rulesFor(u, namespace)
}

// RoleRefRules returns the rules of the role that a binding in namespace refers to.
func (p *Policy) RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	return p.current.Load().roleRefRules(ref, namespace)
}

// Run feeds the index from the stores until ctx ends: it lists each kind, watches from the list's
// revision, lists again when a watch ends, and swaps in a new index after each batch of changes.
func (p *Policy) Run(ctx context.Context, stores Stores, log *slog.Logger) {
	updates := make(chan update, 64)
	var wg sync.WaitGroup
	for _, k := range []struct {
		resource string
		store    storage.Store
	}{
		{ResourceRoles, stores.Roles},
		{ResourceClusterRoles, stores.ClusterRoles},
		{ResourceRoleBindings, stores.RoleBindings},
		{ResourceClusterRoleBindings, stores.ClusterRoleBindings},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reflect(ctx, k.store, storage.ResourcePrefix(rbacv1.GroupName, k.resource, ""), k.resource, updates, log)
		}()
	}
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			p.apply(u, log)
		drain:
			for {
				select {
				case u := <-updates:
					p.apply(u, log)
				default:
					break drain
				}
			}
			p.publish()
		}
	}
}

// update is one change of one kind: a whole list (reset) or one event.
type update struct {
	resource string
	reset    bool
	items    []storage.KeyValue
	deleted  bool
}

// reflect sends resource's list, then its changes, to out until ctx ends.
func reflect(ctx context.Context, store storage.Store, prefix, resource string, out chan<- update, log *slog.Logger) {
	storage.Reflect(ctx, store, prefix, func(reset bool, items []storage.KeyValue, deleted bool) bool {
		return send(ctx, out, update{resource: resource, reset: reset, items: items, deleted: deleted})
	}, log.With("for", "the RBAC index"))
}

func send(ctx context.Context, out chan<- update, u update) bool {
	select {
	case out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// apply records u in the objects the next index is built from.
func (p *Policy) apply(u update, log *slog.Logger) {
	o := p.objs
	if u.reset {
		p.listened[u.resource] = true
		switch u.resource {
		case ResourceRoles:
			o.roles = map[string]*rbacv1.Role{}
		case ResourceClusterRoles:
			o.clusterRoles = map[string]*rbacv1.ClusterRole{}
		case ResourceRoleBindings:
			o.roleBindings = map[string]*rbacv1.RoleBinding{}
		case ResourceClusterRoleBindings:
			o.clusterRoleBindings = map[string]*rbacv1.ClusterRoleBinding{}
		}
	}
	for _, kv := range u.items {
		var err error
		switch u.resource {
		case ResourceRoles:
			err = put(o.roles, kv, u.deleted)
		case ResourceClusterRoles:
			err = put(o.clusterRoles, kv, u.deleted)
		case ResourceRoleBindings:
			err = put(o.roleBindings, kv, u.deleted)
		case ResourceClusterRoleBindings:
			err = put(o.clusterRoleBindings, kv, u.deleted)
		}
		if err != nil {
			log.Error("a stored RBAC object does not decode; it grants nothing", "key", kv.Key, "err", err)
		}
	}
}

func put[T any](m map[string]*T, kv storage.KeyValue, deleted bool) error {
	if deleted {
		delete(m, kv.Key)
		return nil
	}
	obj := new(T)
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		delete(m, kv.Key)
		return fmt.Errorf("decoding %s: %w", kv.Key, err)
	}
	if om, ok := any(obj).(metav1.Object); ok {
		om.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
	}
	m[kv.Key] = obj
	return nil
}

// publish swaps in an index of the current objects once every kind has been listed.
func (p *Policy) publish() {
	if len(p.listened) < 4 {
		return
	}
	p.current.Store(buildIndex(p.objs))
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}
