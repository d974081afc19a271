package handlers

import (
	"errors"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apictl/apictl/pkg/registry/crconvert"
	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/cacher"
)

// Custom resources of a CRD with several versions are stored at its storage version (encode converts
// every write) and converted to the version of the route on every read (below). The scopes of built-in
// resources and of single-version CRDs have no converter: their stored objects always are at the
// route's version, so their reads keep sending the stored bytes as they are, without decoding. For a
// CRD with several versions, objects already at the route's version are recognised from their first
// bytes (crconvert's AtVersion) and take that same path.

// ConverterFactory makes the converters of CRDs with several versions. Its zero value is ready: the
// factory (kube's, holding the webhook clients) is made on first use, so that servers without such
// CRDs never make one.
type ConverterFactory struct {
	once    sync.Once
	factory *crconvert.Factory
	err     error
}

// Converter returns the converter of crd; nil when crd is nil or has a single version, whose objects
// never need converting.
func (f *ConverterFactory) Converter(crd *apiextensionsv1.CustomResourceDefinition) (*crconvert.Converter, error) {
	if crd == nil || len(crd.Spec.Versions) < 2 {
		return nil, nil
	}
	f.once.Do(func() { f.factory, f.err = crconvert.NewFactory() })
	if f.err != nil {
		return nil, f.err
	}
	return f.factory.NewConverter(crd)
}

// converted writes the event of an object that must be converted first: its own line (or table row),
// where other events share the watch cache's encoding.
func (e *eventWriter) converted(ev *cacher.Event) error {
	kv, err := e.scope.store.Readable(ev.KeyValue())
	if err != nil {
		return err
	}
	if e.table != nil {
		obj, err := e.scope.store.DecodeStored(kv)
		if err != nil {
			return err
		}
		return e.asTable(string(ev.Type), obj)
	}
	obj, err := storage.WithResourceVersion(nil, kv.Value, kv.ModRevision)
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(`{"type":"","object":}`)+len(ev.Type)+len(obj)+1)
	line = append(line, `{"type":"`...)
	line = append(line, ev.Type...)
	line = append(line, `","object":`...)
	line = append(line, obj...)
	_, err = e.out.Write(append(line, "}\n"...))
	return err
}

// endWithStatus ends a watch whose event could not be written because its object does not convert:
// the client gets the Status as an ERROR event, as kube's watches end on an object they cannot decode,
// and watches again. Other errors (the client went away) end the watch without a word.
func endWithStatus(ew *eventWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return
	}
	s := st.Status()
	_ = ew.status(&s)
	ew.flush()
}
