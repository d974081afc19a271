package handlers

import (
	"net/http"

	"github.com/apictl/apictl/pkg/routes"
)

// update answers PUT of an object, its status or a namespace's finalizers.
func (s *scope) update(w http.ResponseWriter, r *http.Request, p routes.Params) {
	req, ok := s.readWrite(w, r, "UpdateOptions", p.Name)
	if !ok {
		return
	}
	obj, warnings, err := s.decodeObject(req.body, req.bodyFormat, req.opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, created, err := s.store.UpdateObject(r.Context(), obj, p, req.opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	addWarnings(w, warnings)
	writeJSON(w, r, code, req.out.format, body)
}
