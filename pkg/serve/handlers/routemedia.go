package handlers

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
)

// checkRouteMedia answers as the router in front of kube's REST handlers does (go-restful's
// RouterJSR311), before any handler runs: a PATCH whose Content-Type is none of the route's patch
// types is a 415, and a request whose Accept header names no media type the route produces is a 406
// listing what it does. Both are go-restful's own words, turned into a Status as kube does
// (NewGenericServerResponse: no kind, empty details). Only PATCH routes declare what they consume in
// kube; the others take any Content-Type here and judge the body in the handler.
//
// The handlers then negotiate the parameters (as=Table, v=...) with kube's rules and messages
// (negotiateOutput), as kube's handlers do.
func checkRouteMedia(route *routes.Route, r *http.Request) error {
	if route.Action == routes.ActionPatch {
		contentType := r.Header.Get("Content-Type")
		if contentType == "" {
			// go-restful takes a body without a type as application/octet-stream, which no
			// patch route consumes.
			contentType = "application/octet-stream"
		}
		if !mediaListMatches(contentType, route.Consumes, false) {
			return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "",
				"415: Unsupported Media Type", 0, false)
		}
	}
	accept := r.Header.Get("Accept")
	// What client-go's JSON clients send, and no header at all, skip the scan.
	if accept == "" || accept == mediaJSON {
		return nil
	}
	if !mediaListMatches(accept, route.Produces, true) {
		return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "",
			"406: Not Acceptable\n\nAvailable representations: "+strings.Join(route.Produces, ", "), 0, false)
	}
	return nil
}

// mediaListMatches reports whether one of the comma-separated media types in header, its parameters
// cut off and spaces (not tabs) trimmed, is one of offered (compared exactly, case included, as go-restful does),
// or */* in offered; with anyWildcard, */* in header matches too. Type wildcards such as application/*
// match nothing, as in go-restful.
func mediaListMatches(header string, offered []string, anyWildcard bool) bool {
	for remaining := header; ; {
		var mediaType string
		mediaType, remaining, _ = strings.Cut(remaining, ",")
		mediaType, _, _ = strings.Cut(mediaType, ";")
		mediaType = strings.Trim(mediaType, " ") // spaces only, as go-restful trims
		if anyWildcard && mediaType == "*/*" {
			return true
		}
		for _, o := range offered {
			if o == "*/*" || o == mediaType {
				return true
			}
		}
		if remaining == "" {
			return false
		}
	}
}
