package audit

import (
	"context"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
)

// AddAnnotations records annotations on the request's audit event, as kube's admission audit
// decorator does: get returns those an event at the given level records (admission attributes'
// GetAnnotations). Without an event (no audit log, or a policy that logs nothing for the request)
// it does nothing.
func AddAnnotations(ctx context.Context, get func(maxLevel auditinternal.Level) map[string]string) {
	st := stateFrom(ctx)
	if st == nil || st.ev == nil {
		return
	}
	annotations := get(st.ev.cfg.level)
	if len(annotations) == 0 {
		return
	}
	kv := make([]string, 0, 2*len(annotations))
	for k, v := range annotations {
		kv = append(kv, k, v)
	}
	st.ev.annotate(kv...)
}
