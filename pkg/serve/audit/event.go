package audit

import (
	"net/http"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/apictl/apictl/pkg/serve/request"
)

// kube truncates long User-Agent headers in events this way (k8s.io/apiserver/pkg/audit/request.go).
const (
	maxUserAgentLength      = 1024
	userAgentTruncateSuffix = "...TRUNCATED"
)

// event is one request's audit event, written again at each stage. The lock guards it against the
// rare handler that writes its response from another goroutine.
type event struct {
	mu   sync.Mutex
	sink *sink
	cfg  levelConfig
	ev   auditv1.Event
	// rec is filled in by the impersonation filter, which runs inside the audit filter: when it has an
	// impersonator, rec.User is the impersonated user.
	rec *request.AccessRecord
	now func() time.Time
}

// newEvent fills in what kube's LogRequestMetadata does: who, from where, what, when.
func newEvent(s *sink, now func() time.Time, r *http.Request, st *state, u *request.User, info *request.RequestInfo, cfg levelConfig) *event {
	e := &event{sink: s, cfg: cfg, now: now}
	ev := &e.ev
	ev.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: auditv1.SchemeGroupVersion.String()}
	ev.Level = auditv1.Level(cfg.level)
	ev.AuditID = types.UID(st.id)
	ev.RequestURI = r.URL.RequestURI()
	ev.UserAgent = r.UserAgent()
	if len(ev.UserAgent) > maxUserAgentLength {
		ev.UserAgent = ev.UserAgent[:maxUserAgentLength] + userAgentTruncateSuffix
	}
	for _, ip := range utilnet.SourceIPs(r) {
		ev.SourceIPs = append(ev.SourceIPs, ip.String())
	}
	ev.RequestReceivedTimestamp = metav1.NewMicroTime(st.received)
	if u != nil {
		ev.User = userInfo(u)
	}
	if info != nil {
		ev.Verb = info.Verb
		if info.IsResourceRequest {
			ev.ObjectRef = &auditv1.ObjectReference{
				Resource:    info.Resource,
				Namespace:   info.Namespace,
				Name:        info.Name,
				APIGroup:    info.APIGroup,
				APIVersion:  info.APIVersion,
				Subresource: info.Subresource,
			}
		}
	}
	return e
}

func userInfo(u *request.User) authnv1.UserInfo {
	info := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authnv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	return info
}

// omitted reports whether the policy leaves stage out.
func (e *event) omitted(stage auditinternal.Stage) bool {
	for _, s := range e.cfg.omitStages {
		if s == stage {
			return true
		}
	}
	return false
}

// process writes the event at stage, unless the policy omits it; false if it could not be stored.
func (e *event) process(stage auditinternal.Stage) bool {
	if e.omitted(stage) {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Stage = auditv1.Stage(stage)
	if stage == auditinternal.StageRequestReceived {
		e.ev.StageTimestamp = e.ev.RequestReceivedTimestamp
	} else {
		e.ev.StageTimestamp = metav1.NewMicroTime(e.now())
		if e.rec != nil && e.rec.Impersonator != nil && e.rec.User != nil && e.ev.ImpersonatedUser == nil {
			iu := userInfo(e.rec.User)
			e.ev.ImpersonatedUser = &iu
		}
	}
	return e.sink.write(&e.ev)
}

// annotate adds annotations as key, value pairs, as kube's audit.AddAuditAnnotations does.
func (e *event) annotate(kv ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ev.Annotations == nil {
		e.ev.Annotations = make(map[string]string, len(kv)/2)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		e.ev.Annotations[kv[i]] = kv[i+1]
	}
}

// setStatus records the response status; a Status object, when the response is one, replaces the
// bare code with its bounded fields, as kube's LogResponseObject does.
func (e *event) setStatus(s *metav1.Status) {
	e.mu.Lock()
	e.ev.ResponseStatus = s
	e.mu.Unlock()
}

func (e *event) status() *metav1.Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ev.ResponseStatus
}

// setObjects records the request and response objects (either may be nil) and completes the object
// reference from the request object's metadata, as kube's LogRequestObject does.
func (e *event) setObjects(req, resp []byte, meta *objectMeta) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if meta != nil {
		if e.ev.ObjectRef == nil {
			e.ev.ObjectRef = &auditv1.ObjectReference{}
		}
		ref := e.ev.ObjectRef
		if ref.Namespace == "" {
			ref.Namespace = meta.Namespace
		}
		if ref.Name == "" {
			ref.Name = meta.Name
		}
		if ref.UID == "" {
			ref.UID = types.UID(meta.UID)
		}
		if ref.ResourceVersion == "" {
			ref.ResourceVersion = meta.ResourceVersion
		}
	}
	if req != nil && !e.cfg.level.Less(auditinternal.LevelRequest) {
		e.ev.RequestObject = &runtime.Unknown{Raw: req, ContentType: runtime.ContentTypeJSON}
	}
	if resp != nil && !e.cfg.level.Less(auditinternal.LevelRequestResponse) {
		e.ev.ResponseObject = &runtime.Unknown{Raw: resp, ContentType: runtime.ContentTypeJSON}
	}
}
