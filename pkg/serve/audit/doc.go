// Package audit writes kube-apiserver's audit log: audit.k8s.io/v1 Events, one JSON object a line,
// chosen by an audit.k8s.io/v1 Policy, at the stages kube writes them (RequestReceived,
// ResponseStarted for long-running requests, ResponseComplete, Panic).
//
// The policy is read and evaluated by k8s.io/apiserver's own packages, so that rules match and
// validation errors read exactly as in kube; the events are built here, from the request info, the
// user and the bytes on the wire, because apictl's handlers are not kube's.
//
// An Auditor is nil when no policy is configured, and every method of a nil Auditor returns what it
// was given: the chain then holds no audit filter at all, and requests pay nothing.
//
// Where the pieces sit in the chain, as in kube:
//
//	WithInit (outside recovery): the audit ID (from the Audit-ID request header, else new), echoed
//	  in the Audit-Id response header, and the time the request arrived
//	Authenticator (wraps authentication): a failed authentication is one ResponseStarted event, 401
//	WithAudit (right after authentication, before impersonation): evaluates the policy for the user
//	  who authenticated and writes the events
//	Authorizer (wraps the authorization filter's authorizer): the authorization.k8s.io/decision and
//	  authorization.k8s.io/reason annotations
package audit
