package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/serve/request"
	"github.com/apictl/apictl/pkg/storage"
)

// listOptionsKind is the group kind kube names in Invalid errors about list and watch options.
var listOptionsKind = schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}

// listOptions are a list or watch request's query parameters, checked.
type listOptions struct {
	labels               labels.Selector
	fields               fields.Selector
	watch                bool
	allowBookmarks       bool
	resourceVersion      string
	resourceVersionMatch storage.ResourceVersionMatch
	limit                int64
	continueToken        string
	timeout              time.Duration // 0: none given
	sendInitialEvents    *bool
}

// parseListOptions reads and checks list options with kube's rules and messages.
func parseListOptions(q url.Values) (*listOptions, error) {
	o := &listOptions{labels: labels.Everything(), fields: fields.Everything()}
	var err error
	if s := q.Get("labelSelector"); s != "" {
		if o.labels, err = labels.Parse(s); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
	}
	if s := q.Get("fieldSelector"); s != "" {
		if o.fields, err = fields.ParseSelector(s); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
	}
	o.watch, _ = request.QueryParamBool(q, "watch")
	o.allowBookmarks, _ = request.QueryParamBool(q, "allowWatchBookmarks")
	o.resourceVersion = q.Get("resourceVersion")
	o.resourceVersionMatch = storage.ResourceVersionMatch(q.Get("resourceVersionMatch"))
	o.continueToken = q.Get("continue")
	if s := q.Get("limit"); s != "" {
		if o.limit, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q: %v", s, err))
		}
	}
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q: %v", s, err))
		}
		o.timeout = time.Duration(n) * time.Second
	}
	if v, ok := request.QueryParamBool(q, "sendInitialEvents"); ok {
		o.sendInitialEvents = &v
	}
	return o, o.validate()
}

// validate applies kube's rules for combining the options (apimachinery's
// internalversion/validation.ValidateListOptions).
func (o *listOptions) validate() error {
	var errs field.ErrorList
	match := o.resourceVersionMatch
	switch match {
	case storage.MatchUnset, storage.MatchNotOlderThan, storage.MatchExact:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("resourceVersionMatch"), match,
			[]string{string(storage.MatchExact), string(storage.MatchNotOlderThan), ""}))
	}
	switch {
	case o.watch && o.sendInitialEvents != nil:
		if match != storage.MatchNotOlderThan {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		}
		if !o.allowBookmarks {
			errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"), "sendInitialEvents requires setting allowWatchBookmarks to true"))
		}
	case o.watch && match != storage.MatchUnset:
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
	case !o.watch && o.sendInitialEvents != nil:
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	case match != storage.MatchUnset:
		switch {
		case o.resourceVersion == "":
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		case o.continueToken != "":
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden when continue is provided"))
		case match == storage.MatchExact && o.resourceVersion == "0":
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
		}
	}
	if o.limit < 0 {
		// kube does not validate limit: a negative one lists everything, like none.
		o.limit = 0
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	if o.continueToken != "" && o.resourceVersion != "" && o.resourceVersion != "0" {
		return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	return nil
}

// writeOptions are the query parameters of create, update, patch and delete.
type writeOptions struct {
	dryRun          bool
	fieldManager    string
	fieldValidation string
	// managed is set when the object's managedFields are already maintained (a create by server-side
	// apply), so the write must not record the operation a second time.
	managed bool
}

// fieldValidation directives; the default is Warn, as in kube.
const (
	validationIgnore = "Ignore"
	validationWarn   = "Warn"
	validationStrict = "Strict"
)

// parseWriteOptions reads dryRun, fieldManager and fieldValidation with kube's checks; problems are
// a 422 about kind (CreateOptions, UpdateOptions, PatchOptions), as kube reports them.
func parseWriteOptions(q url.Values, kind string) (*writeOptions, error) {
	o := &writeOptions{fieldManager: q.Get("fieldManager"), fieldValidation: q.Get("fieldValidation")}
	var errs field.ErrorList
	o.dryRun, errs = parseDryRun(q["dryRun"])
	if len(o.fieldManager) > 128 {
		errs = append(errs, field.TooLong(field.NewPath("fieldManager"), "", 128))
	}
	for _, r := range o.fieldManager {
		if r < ' ' || r > '~' {
			errs = append(errs, field.Invalid(field.NewPath("fieldManager"), o.fieldManager, "must only contain printable characters"))
			break
		}
	}
	switch o.fieldValidation {
	case "":
		o.fieldValidation = validationWarn
	case validationIgnore, validationWarn, validationStrict:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), o.fieldValidation,
			[]string{validationIgnore, validationWarn, validationStrict}))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return o, nil
}

// parseDryRun accepts only "All", the one dry-run mode kube knows.
func parseDryRun(values []string) (bool, field.ErrorList) {
	var errs field.ErrorList
	dry := false
	for _, v := range values {
		if v != metav1.DryRunAll {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun"), v, []string{metav1.DryRunAll}))
			continue
		}
		dry = true
	}
	return dry, errs
}
