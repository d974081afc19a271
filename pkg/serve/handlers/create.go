package handlers

import (
	"net/http"

	"github.com/apictl/apictl/pkg/routes"
)

// create answers POST: decode, settle name and namespace, apply the kind's rules, store, 201.
func (s *scope) create(w http.ResponseWriter, r *http.Request, p routes.Params) {
	req, ok := s.readWrite(w, r, "CreateOptions", "")
	if !ok {
		return
	}
	obj, warnings, err := s.decodeObject(req.body, req.bodyFormat, req.opts.FieldValidation)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := s.store.CreateObject(r.Context(), obj, p.Namespace, req.opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	addWarnings(w, warnings)
	writeJSON(w, r, http.StatusCreated, req.out.format, body)
}
