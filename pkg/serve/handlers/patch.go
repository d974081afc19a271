package handlers

import (
	"errors"
	"io"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apictl/apictl/pkg/patch"
	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// patchCall is what every PATCH reads before anything else.
type patchCall struct {
	req    patch.Request
	out    output
	dryRun bool
}

// readPatch reads a PATCH request; on a problem it answers with the error and returns false.
func (s *scope) readPatch(w http.ResponseWriter, r *http.Request, p routes.Params) (*patchCall, bool) {
	target := s.store.PatchTarget()
	typ, err := s.Patcher.ParseType(target, r.Header.Get("Content-Type"))
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	out, err := negotiateOutput(r.Header.Get("Accept"), 0)
	if err != nil {
		writeError(w, r, err)
		return nil, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return nil, false
	}
	q := r.URL.Query()
	req := patch.Request{Target: target, Type: typ, Namespace: p.Namespace, Name: p.Name, Patch: body, UserAgent: r.UserAgent(),
		Options: metav1.PatchOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}}
	if force, ok := request.QueryParamBool(q, "force"); ok {
		req.Options.Force = &force
	}
	return &patchCall{req: req, out: out, dryRun: len(req.Options.DryRun) > 0}, true
}

// patchScale answers PATCH of a scale subresource: the patch applies to the Scale made from the
// object, and the result is applied back to the object under an update's rules.
func (s *scope) patchScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	call, ok := s.readPatch(w, r, p)
	if !ok {
		return
	}
	var warnings []string
	scale, err := s.store.ApplyScale(r.Context(), p, &store.WriteOptions{DryRun: call.dryRun}, func(base *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		res, err := s.Patcher.Patch(base, call.req)
		if err != nil {
			return nil, err
		}
		warnings = res.Warnings
		return res.Object.(*autoscalingv1.Scale), nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	addWarnings(w, warnings)
	s.writeScale(w, r, call.out, http.StatusOK, scale)
}

// patch answers PATCH with any of the four patch types: the patch is applied to the stored object
// inside the compare-and-swap loop, then the same rules as an update's; a server-side apply to a
// missing object creates it.
func (s *scope) patch(w http.ResponseWriter, r *http.Request, p routes.Params) {
	call, ok := s.readPatch(w, r, p)
	if !ok {
		return
	}
	req, out, dryRun, typ := call.req, call.out, call.dryRun, call.req.Type
	req.Decode = s.shape.patchDecoder(s, req.Options.FieldValidation)
	var warnings []string
	key := s.Key(p.Namespace, p.Name)
	update := func(current storage.KeyValue) ([]byte, error) {
		old, err := s.store.DecodeStored(current)
		if err != nil {
			return nil, err
		}
		res, err := s.Patcher.Patch(old, req)
		if err != nil {
			return nil, err
		}
		obj := s.shape.afterPatch(s, res, typ)
		warnings = res.Warnings
		if err := checkPatchedVersion(obj, current.ModRevision, s, p.Name); err != nil {
			return nil, err
		}
		// kube admits a patch as an UPDATE of the patched object, inside the compare-and-swap.
		adm := s.store.StartAdmission(r.Context(), kadmission.Update, obj, old, p.Namespace, p.Name, store.PatchUpdateOptions(req.Options), dryRun)
		if err := adm.Mutate(r.Context()); err != nil {
			return nil, err
		}
		updated, err := s.store.ApplyUpdate(r.Context(), obj, old)
		if err != nil {
			return nil, err
		}
		if err := adm.Validate(r.Context()); err != nil {
			return nil, err
		}
		return s.store.Encode(updated)
	}
	kv, err := s.store.GuaranteedUpdate(r.Context(), key, dryRun, update, storage.UpdateOptions{TTL: s.TTL})
	if err == nil && !dryRun {
		kv, err = s.store.FinishIfFinalized(r.Context(), key, kv)
	}
	if storage.IsNotFound(err) {
		s.createOnPatch(w, r, p, req, out, dryRun)
		return
	}
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return
	}
	body, err := s.store.Respond(kv)
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return
	}
	addWarnings(w, warnings)
	writeJSON(w, r, http.StatusOK, out.format, body)
}

// createOnPatch handles a PATCH of a missing object: a server-side apply to the resource creates it
// (201); anything else is the 404 the patcher returns.
func (s *scope) createOnPatch(w http.ResponseWriter, r *http.Request, p routes.Params, req patch.Request, out output, dryRun bool) {
	res, err := s.Patcher.Patch(nil, req)
	if err == nil && !res.Created {
		err = apierrors.NewNotFound(s.GR, p.Name)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj := s.shape.afterPatch(s, res, req.Type)
	body, err := s.store.CreateObject(r.Context(), obj, p.Namespace, &store.WriteOptions{DryRun: dryRun, Managed: true, UserAgent: r.UserAgent(),
		FieldManager: req.Options.FieldManager, FieldValidation: req.Options.FieldValidation})
	if err != nil {
		writeError(w, r, err)
		return
	}
	addWarnings(w, res.Warnings)
	writeJSON(w, r, http.StatusCreated, out.format, body)
}

// checkPatchedVersion refuses a patch that names a resourceVersion other than the stored one, as
// kube's store does for any write that carries one.
func checkPatchedVersion(obj runtime.Object, current int64, s *scope, name string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rv, err := store.ParseResourceVersion(m.GetResourceVersion())
	if err != nil {
		return err
	}
	if rv != 0 && rv != current {
		return apierrors.NewConflict(s.GR, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	return nil
}
