package handlers

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apictl/apictl/pkg/registry"
)

// mediaProtobuf is kube's protobuf encoding. kubectl's typed clients send built-in objects this way
// (kubectl create namespace, create configmap), so the server must read it; responses stay JSON, which
// those clients accept too.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protobufDecoder reads protobuf bodies of the built-in kinds, wrapped in kube's envelope.
type protobufDecoder struct {
	serializer *protobuf.Serializer
}

func newProtobufDecoder() (*protobufDecoder, error) {
	scheme, err := registry.BuiltinScheme()
	if err != nil {
		return nil, err
	}
	return &protobufDecoder{serializer: protobuf.NewSerializer(scheme, scheme)}, nil
}

// decode fills into, a pointer to the k8s.io/api type the route expects, from body.
func (d *protobufDecoder) decode(body []byte, into runtime.Object, s *scope) error {
	if s.Strategy != nil && s.Strategy.Custom() {
		return unsupportedMediaType(mediaJSON, mediaYAML)
	}
	_, gvk, err := d.serializer.Decode(body, nil, into)
	if err != nil {
		return s.cannotHandle(err)
	}
	if gvk != nil && *gvk != s.ObjectGVK {
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s) of %s", gvk, s.ObjectGVK, s.ResourcePath()))
	}
	return nil
}
