package tables

import (
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The meta.k8s.io versions a Table can be served in; kubectl asks for v1 first and v1beta1 second.
const (
	VersionV1      = "v1"
	VersionV1beta1 = "v1beta1"
)

// Options are what a request asks of its table.
type Options struct {
	// IncludeObject says what each row carries: IncludeMetadata (also when empty) a
	// PartialObjectMetadata, IncludeObject the whole object, IncludeNone nothing.
	IncludeObject metav1.IncludeObjectPolicy
	// NoHeaders leaves out the column definitions, as kube does for every watch event after the
	// first (Watch sets it itself).
	NoHeaders bool
	// Version is the meta.k8s.io version of the Table and of its PartialObjectMetadata rows:
	// VersionV1 (the default when empty) or VersionV1beta1.
	Version string
}

// ParseOptions reads a request's includeObject query parameter (the first value, as kube reads it)
// and checks it with kube's rule and message: anything but Metadata, Object, None or empty is a 400.
func ParseOptions(query url.Values) (Options, error) {
	var o Options
	if v := query["includeObject"]; len(v) > 0 {
		o.IncludeObject = metav1.IncludeObjectPolicy(v[0])
	}
	return o, o.validate()
}

func (o Options) validate() error {
	switch o.IncludeObject {
	case metav1.IncludeMetadata, metav1.IncludeNone, metav1.IncludeObject, "":
	default:
		err := field.Invalid(field.NewPath("includeObject"), o.IncludeObject, "must be 'Metadata', 'Object', 'None', or empty")
		return apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", err.Error()))
	}
	switch o.Version {
	case "", VersionV1, VersionV1beta1:
	default:
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusNotAcceptable,
			Reason:  metav1.StatusReasonNotAcceptable,
			Message: fmt.Sprintf("no Table exists in group version %s/%s", metav1.GroupName, o.Version),
		}}
	}
	return nil
}

// apiVersion is the apiVersion of the Table and of its PartialObjectMetadata rows.
func (o Options) apiVersion() string {
	if o.Version == "" {
		return metav1.GroupName + "/" + VersionV1
	}
	return metav1.GroupName + "/" + o.Version
}
