package store

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/serve/request"
)

// EscalationChecker vets a write of an RBAC role or binding, as kube's RBAC storage does: nobody
// grants what they do not hold unless allowed to escalate or bind. old is nil for a create.
type EscalationChecker interface {
	Check(ctx context.Context, u *request.User, info *request.RequestInfo, obj, old runtime.Object) error
}

// checkEscalation runs the configured EscalationChecker on writes of rbac.authorization.k8s.io
// objects, with the request's user and request info.
func (s *Store) checkEscalation(ctx context.Context, obj, old runtime.Object) error {
	c := s.env.Escalation
	if c == nil || s.GR.Group != rbacv1.GroupName || s.Sub != nil {
		return nil
	}
	u, _ := request.UserFrom(ctx)
	info, ok := request.RequestInfoFrom(ctx)
	if !ok {
		info = &request.RequestInfo{IsResourceRequest: true, APIGroup: s.GR.Group, Resource: s.GR.Resource}
	}
	return c.Check(ctx, u, info, obj, old)
}
