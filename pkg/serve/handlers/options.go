package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/apictl/apictl/pkg/serve/store"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	listvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

// parseListOptions reads and checks list options with kube's rules and messages, with the WatchList
// feature on (apictl's default); watches give the server's gate to parseListOptionsGated.
func parseListOptions(q url.Values) (*listOptions, error) {
	return parseListOptionsGated(q, true)
}

// parseListOptionsGated reads the options in the order kube's parameter codec converts them (the
// order of internalversion.ListOptions' fields), answering the first that does not parse with kube's
// 400, then checks how they combine with kube's own ValidateListOptions. What kube checks later (the
// field selector against the kind, the continue token and the resourceVersion in storage) is left to
// the caller: see checkResourceVersion.
func parseListOptionsGated(q url.Values, watchList bool) (*listOptions, error) {
	o := &listOptions{labels: labels.Everything(), fields: fields.Everything()}
	var err error
	// kube passes the parsers' errors on as they are: labels.Parse's and fields.ParseSelector's
	// messages already say what failed ("unable to parse requirement: ...", "invalid field selector: ...").
	if s := q.Get("labelSelector"); s != "" {
		if o.labels, err = labels.Parse(s); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	if s := q.Get("fieldSelector"); s != "" {
		if o.fields, err = fields.ParseSelector(s); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	o.watch, _ = request.QueryParamBool(q, "watch")
	o.allowBookmarks, _ = request.QueryParamBool(q, "allowWatchBookmarks")
	o.resourceVersion = q.Get("resourceVersion")
	o.resourceVersionMatch = storage.ResourceVersionMatch(q.Get("resourceVersionMatch"))
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		o.timeout = time.Duration(n) * time.Second
	}
	if s := q.Get("limit"); s != "" {
		if o.limit, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	o.continueToken = q.Get("continue")
	if v, ok := request.QueryParamBool(q, "sendInitialEvents"); ok {
		o.sendInitialEvents = &v
	}
	return o, o.validate(watchList)
}

// validate applies kube's rules for combining the options: apimachinery's
// internalversion/validation.ValidateListOptions itself, so that the causes, their order and their
// words are kube's.
func (o *listOptions) validate(watchList bool) error {
	if o.limit < 0 {
		// kube does not validate limit: a negative one lists everything, like none.
		o.limit = 0
	}
	kopts := internalversion.ListOptions{
		Watch:                o.watch,
		AllowWatchBookmarks:  o.allowBookmarks,
		ResourceVersion:      o.resourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatch(o.resourceVersionMatch),
		Continue:             o.continueToken,
		SendInitialEvents:    o.sendInitialEvents,
	}
	if errs := listvalidation.ValidateListOptions(&kopts, watchList); len(errs) > 0 {
		return apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	return nil
}

// checkResourceVersion is kube's answer for a resourceVersion that is not a number, which kube's
// storage finds only once it reads, after the field selector's check. A list (and a delete of a
// collection) answers 400 BadRequest; a watch passes the storage's error on unconverted, a 500 without
// a reason. A list with a continue token leaves it to the token's checks, which come first in kube and
// refuse any resourceVersion beside a token (storage.DecodeContinue's callers).
func (o *listOptions) checkResourceVersion() error {
	if o.continueToken != "" && !o.watch {
		return nil
	}
	return checkResourceVersion(o.resourceVersion, !o.watch)
}

// checkResourceVersion checks a resourceVersion a read names as kube's storage parses it
// (APIObjectVersioner.ParseResourceVersion: any unsigned number; revisions beyond etcd's are the
// storage's to judge). list selects the LIST answer (400 "invalid resource version: ...") over the
// GET and WATCH one (the same words without the prefix, as a 500 without a reason).
func checkResourceVersion(rv string, list bool) error {
	if rv == "" || rv == "0" {
		return nil
	}
	_, err := strconv.ParseUint(rv, 10, 64)
	if err == nil {
		return nil
	}
	msg := field.ErrorList{field.Invalid(field.NewPath("resourceVersion"), rv, err.Error())}.ToAggregate().Error()
	if list {
		return apierrors.NewBadRequest("invalid resource version: " + msg)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusInternalServerError, Message: msg}}
}

// fieldValidation directives; the default is Warn, as in kube.
const (
	validationIgnore = "Ignore"
	validationWarn   = "Warn"
	validationStrict = "Strict"
)

// parseWriteOptions reads dryRun, fieldManager and fieldValidation and checks them with kube's own
// validation (metav1 validation's ValidateCreateOptions and ValidateUpdateOptions do these three);
// problems are a 422 about kind (CreateOptions, UpdateOptions), as kube reports them.
func parseWriteOptions(q url.Values, kind string) (*store.WriteOptions, error) {
	dryRun := q["dryRun"]
	o := &store.WriteOptions{DryRun: len(dryRun) > 0, FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")}
	errs := metav1validation.ValidateFieldManager(o.FieldManager, field.NewPath("fieldManager"))
	errs = append(errs, metav1validation.ValidateDryRun(field.NewPath("dryRun"), dryRun)...)
	errs = append(errs, metav1validation.ValidateFieldValidation(field.NewPath("fieldValidation"), o.FieldValidation)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	if o.FieldValidation == "" {
		o.FieldValidation = validationWarn
	}
	return o, nil
}
