package audit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/apictl/apictl/pkg/serve/filters"
	"github.com/apictl/apictl/pkg/serve/request"
)

// HeaderAuditID is the request and response header of the audit ID (Go spells it Audit-Id).
const HeaderAuditID = auditinternal.HeaderAuditID

// WithInit gives the request its audit ID and arrival time, as kube's WithAuditInit and
// WithRequestReceivedTimestamp do: the ID comes from the Audit-ID request header when a client (or
// a front proxy) sent one, kept as it is, and is echoed in the Audit-Id response header.
func (a *Auditor) WithInit(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderAuditID)
		if id == "" {
			id = a.newID()
		}
		if w.Header().Get(HeaderAuditID) == "" {
			w.Header().Set(HeaderAuditID, id)
		}
		st := &state{id: id, received: a.now()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stateKey{}, st)))
	})
}

// WithAudit writes the request's events at the level the policy gives the user who authenticated.
// It belongs right inside authentication and outside impersonation, as in kube, so that refused
// impersonations are logged too.
func (a *Auditor) WithAudit(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		st := stateFrom(ctx)
		if st == nil {
			st = &state{id: a.newID(), received: a.now()}
			ctx = context.WithValue(ctx, stateKey{}, st)
		}
		u, _ := request.UserFrom(ctx)
		info, _ := request.RequestInfoFrom(ctx)
		cfg := a.policy.evaluate(u, info, r.URL.Path)
		if cfg.level == auditinternal.LevelNone {
			next.ServeHTTP(w, r)
			return
		}
		e := newEvent(a.sink, a.now, r, st, u, info, cfg)
		st.ev = e
		// The impersonation filter records the user it switches to here; the access log's record
		// serves when there is one.
		rec, ok := request.AccessRecordFrom(ctx)
		if !ok {
			rec = &request.AccessRecord{}
			ctx = request.WithAccessRecord(ctx, rec)
		}
		e.rec = rec
		if !e.process(auditinternal.StageRequestReceived) {
			internalError(w, r, errors.New("failed to store audit event"))
			return
		}
		longRunning := filters.IsLongRunning(info)
		var body *bodyRecorder
		if info != nil && r.Body != nil && r.Body != http.NoBody && needsBody(info.Verb, !cfg.level.Less(auditinternal.LevelRequest)) {
			body = &bodyRecorder{ReadCloser: r.Body, limit: a.maxBody}
			r.Body = body
		}
		rw := &responseWriter{ResponseWriter: w, e: e, longRunning: longRunning, limit: a.maxBody,
			keepBody: !longRunning && !cfg.level.Less(auditinternal.LevelRequestResponse)}
		defer func() {
			if v := recover(); v != nil {
				e.setStatus(&metav1.Status{Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
					Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", v)})
				e.process(auditinternal.StagePanic)
				panic(v)
			}
			a.complete(e, r, info, body, rw)
		}()
		next.ServeHTTP(rw, r.WithContext(ctx))
	})
}

// complete writes the ResponseComplete event, with the objects the level asks for.
func (a *Auditor) complete(e *event, r *http.Request, info *request.RequestInfo, body *bodyRecorder, rw *responseWriter) {
	if e.status() == nil {
		// Neither a header nor a body was written: kube fakes a success, and a long-running request
		// still gets its ResponseStarted.
		e.setStatus(&metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"})
		if rw.longRunning {
			e.process(auditinternal.StageResponseStarted)
		}
	}
	var reqObj, respObj []byte
	var meta *objectMeta
	if raw := body.recorded(); raw != nil {
		var err error
		if reqObj, meta, err = a.protobuf.requestObject(info.Verb, r.Header.Get("Content-Type"), raw); err != nil {
			a.sink.log.Debug("the request object is left out of the audit event", "auditID", e.ev.AuditID, "err", err)
			reqObj = nil
		}
	}
	if s := rw.statusObject(); s != nil {
		e.setStatus(&metav1.Status{Status: s.Status, Message: s.Message, Reason: s.Reason, Details: s.Details, Code: s.Code})
	}
	if rw.keepBody {
		respObj = rw.recorded()
	}
	if e.cfg.omitManagedFields {
		reqObj = a.withoutManagedFields(e, reqObj)
		respObj = a.withoutManagedFields(e, respObj)
	}
	e.setObjects(reqObj, respObj, meta)
	e.process(auditinternal.StageResponseComplete)
}

func (a *Auditor) withoutManagedFields(e *event, raw []byte) []byte {
	if raw == nil {
		return nil
	}
	out, err := stripManagedFields(raw)
	if err != nil {
		a.sink.log.Debug("an object is left out of the audit event", "auditID", e.ev.AuditID, "err", err)
		return nil
	}
	return out
}

// internalError answers as kube's responsewriters.InternalError does: plain text, 500.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	msg := fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err)
	http.Error(w, htmlSanitizer.Replace(msg), http.StatusInternalServerError)
}

var htmlSanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")
