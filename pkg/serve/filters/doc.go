// Package filters is the handler chain around the API: each filter is a func(http.Handler)
// http.Handler with one job. Server assembles them, outermost first:
//
//	stack growth -> Connection: close while shutting down -> audit ID -> recovery -> request info
//	  -> metrics and access log -> Cache-Control -> timeout -> CORS -> authentication -> audit -> impersonation
//	  -> in-flight limit -> authorization -> body limit -> mux
//
// In-flight limiting sits inside authentication, as in kube, because system:masters is exempt from it
// and only authentication knows who is calling; metrics sit outside everything that can reject a
// request so that 401s, 403s and 429s are counted. Audit (pkg/serve/audit, in the chain only when a
// policy is given) sits before impersonation, as in kube, so that a refused impersonation is audited
// too, under the user who authenticated.
package filters
