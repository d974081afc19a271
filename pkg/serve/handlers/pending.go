package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/routes"
)

func (s *scope) patch(w http.ResponseWriter, r *http.Request, p routes.Params) {
	writeError(w, apierrors.NewMethodNotSupported(s.gr, "patch"))
}

func (s *scope) getScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	writeError(w, apierrors.NewMethodNotSupported(s.gr, "get scale"))
}

func (s *scope) updateScale(w http.ResponseWriter, r *http.Request, p routes.Params) {
	writeError(w, apierrors.NewMethodNotSupported(s.gr, "update scale"))
}
