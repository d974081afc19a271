package handlers

//lint:file-ignore SA1019 orphanDependents is deprecated in kube's API, and kube still honours it

import (
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apictl/apictl/pkg/routes"
	"github.com/apictl/apictl/pkg/serve/store"
	"github.com/apictl/apictl/pkg/storage"
)

// parseDeleteOptions reads DeleteOptions as kube's delete handlers do: from the body when there is
// one (JSON, YAML or protobuf, any group's DeleteOptions kind, with the messages of kube's meta
// codecs), else from the query, and validates them.
func parseDeleteOptions(r *http.Request) (*store.DeleteOptions, error) {
	o := &store.DeleteOptions{}
	body, format, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		mediaType := mediaJSON // readBody turned YAML into JSON
		if format == formatProtobuf {
			mediaType = mediaProtobuf
		}
		info, ok := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			return nil, unsupportedMediaType(mediaJSON, mediaYAML, mediaProtobuf)
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		decoder := metainternalversionscheme.Codecs.DecoderToVersion(info.Serializer, metav1.SchemeGroupVersion)
		obj, _, err := decoder.Decode(body, &defaultGVK, &o.DeleteOptions)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != &o.DeleteOptions {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &o.DeleteOptions); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	o.TypeMeta = metav1.TypeMeta{}
	// Deletes of objects that cannot be read are not served: the option is dropped, as kube drops it
	// with its AllowUnsafeMalformedObjectDeletion gate off.
	o.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	if errs := metav1validation.ValidateDeleteOptions(&o.DeleteOptions); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	o.IsDryRun = len(o.DryRun) > 0 // validated: only "All"
	if g := o.GracePeriodSeconds; g != nil && *g < 0 {
		one := int64(1) // as kube's BeforeDelete reads a negative grace period
		o.GracePeriodSeconds = &one
	}
	return o, nil
}

// encodeDeleteResult returns a delete's answer in the negotiated representation: JSON or YAML, or the object's
// PartialObjectMetadata (a Status stays a Status, as kube's transform leaves it).
func encodeDeleteResult(res store.DeleteResult, s *scope, out output) ([]byte, error) {
	switch {
	case out.partial == "" || res.Status:
		return res.Body, nil
	case out.partial != partialObject:
		return nil, partialNotAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", partialObjectList, s.internalTypeName(false)))
	case res.Object != nil:
		return s.appendPartial(nil, *res.Object, out.partialVersion)
	}
	return json.Marshal(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: partialObject, APIVersion: metav1.GroupName + "/" + out.partialVersion}})
}

// delete answers DELETE of one object: 200 with the object while its deletion is pending (202 when
// the client asked for cascading deletion with orphanDependents=false, as kube answers), 200 with a
// Success Status (or, for the kinds whose kube storage returns it, the object) once it is gone.
func (s *scope) delete(w http.ResponseWriter, r *http.Request, p routes.Params) {
	// As kube, the answer's encoding is negotiated first: a request no answer fits deletes nothing.
	out, err := negotiateOutput(r.Header.Get("Accept"), convPartial)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, p.Name))
		return
	}
	res, err := s.store.DeleteObject(r.Context(), p.Namespace, p.Name, opts)
	var body []byte
	if err == nil {
		body, err = encodeDeleteResult(res, s, out)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if res.Pending && opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	writeJSON(w, r, code, out.format, body)
}

// deleteCollection answers DELETE of a collection as kube's store does (DeleteCollection): every
// object the selectors match is deleted as a DELETE of it would be (with the same options, so
// propagationPolicy holds for each), and the answer is the list of the objects as they were listed
// (one page when the client gave a limit, with its continue token).
func (s *scope) deleteCollection(w http.ResponseWriter, r *http.Request, p routes.Params) {
	out, err := negotiateOutput(r.Header.Get("Accept"), convPartial)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := parseDeleteOptions(r)
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, ""))
		return
	}
	list, err := parseListOptions(r.URL.Query())
	if err == nil {
		err = s.fields.check(list.fields)
	}
	if err == nil {
		err = list.checkResourceVersion()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	listOpts := storage.ListOptions{Filter: s.fields.filter(list.labels, list.fields),
		ResourceVersion: list.resourceVersion, ResourceVersionMatch: list.resourceVersionMatch}
	if list.limit > 0 {
		listOpts.Limit, listOpts.Continue = list.limit, list.continueToken
	}
	res, err := s.Backend.List(r.Context(), s.Prefix(p.Namespace), listOpts)
	if err == nil {
		res, err = s.store.ReadableList(res) // the answer is at the route's version
	}
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, ""))
		return
	}
	collOpts := *opts
	collOpts.Collection = true
	for _, kv := range res.Items {
		var m struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			writeError(w, r, apierrors.NewInternalError(fmt.Errorf("reading stored %s: %w", kv.Key, err)))
			return
		}
		// Each delete gets its own copy of the options, as in kube, where a delete may change them.
		itemOpts := collOpts
		itemOpts.DeleteOptions = *collOpts.DeleteOptions.DeepCopy()
		if _, err := s.store.DeleteObject(r.Context(), m.Metadata.Namespace, m.Metadata.Name, &itemOpts); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, r, err)
			return
		}
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if out.partial != "" {
		err = s.writePartialList(buf, out, res, nil)
	} else {
		err = s.writeList(buf, res, nil)
	}
	if err != nil {
		writeError(w, r, store.APIError(err, s.GR, ""))
		return
	}
	writeJSON(w, r, http.StatusOK, out.format, buf.Bytes())
}
