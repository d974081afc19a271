// Package patch applies the four PATCH media types of the Kubernetes API to stored objects and keeps
// metadata.managedFields, the field ownership of server-side apply, for every write:
//
//   - application/json-patch+json (RFC 6902) with kube's limits: at most 10,000 operations (413)
//     and at most 3 MiB added by "copy" operations (json-patch only has a process-wide setting for
//     that; New arms it as kube-apiserver does);
//   - application/merge-patch+json (RFC 7386);
//   - application/strategic-merge-patch+json for built-in kinds, driven by the patch strategies and
//     merge keys of their k8s.io/api Go types; custom resources answer 415, as kube's do;
//   - application/apply-patch+yaml (server-side apply) with fieldManager, force, conflicts as 409,
//     and create-on-apply when the object does not exist.
//
// The merge and ownership machinery is k8s.io/apimachinery's (evanphx/json-patch,
// util/strategicpatch, util/managedfields on structured-merge-diff), configured from the route
// model: one type converter built from the OpenAPI models of the API (pkg/routes/openapi.Models),
// one field manager per resource and subresource. Both are built on the first write that needs
// them (ownership.go), so that a server's start-up and idle memory do not pay for them. The field
// managers type objects through typing.go's converter, which skips work that cannot change their
// result (a stored object's managedFields, the empty object of every create).
//
// # How a handler uses it
//
// Build one Patcher per API when the server starts (New, which is cheap). A PATCH request then goes:
//
//	target := patch.Target{Resource: gvr, Subresource: sub}
//	typ, err := patcher.ParseType(target, r.Header.Get("Content-Type")) // 415 comes first, as in kube
//	// read the body and the query (metav1.PatchOptions: fieldManager, force, fieldValidation, dryRun)
//	req := patch.Request{Target: target, Type: typ, Namespace: ns, Name: name, Patch: body,
//		Options: opts, UserAgent: r.UserAgent()}
//	// inside the storage retry loop, with the stored object:
//	res, err := patcher.Patch(current, req) // then the registry's update rules on res.Object
//	// when the object does not exist, once more with nil: an apply creates (res.Created, 201),
//	// anything else is the 404 Patch returns
//	// res.Warnings go out as Warning headers
//
// Creates and updates (POST, PUT) record ownership the same way, before the registry's rules:
//
//	obj, err = patcher.Update(target, nil, obj, patch.Manager(fieldManager, r.UserAgent()))    // POST
//	obj, err = patcher.Update(target, stored, obj, patch.Manager(fieldManager, r.UserAgent())) // PUT
//
// Every error Patch returns is a *k8s.io/apimachinery/pkg/api/errors.StatusError carrying kube's
// code, reason and message. Patch never modifies the current object it is given: the result is a
// new object.
package patch
