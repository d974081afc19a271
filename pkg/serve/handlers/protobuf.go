package handlers

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
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
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, rbacv1.AddToScheme,
		authenticationv1.AddToScheme, authorizationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("registering the built-in kinds for protobuf: %w", err)
		}
	}
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return &protobufDecoder{serializer: protobuf.NewSerializer(scheme, scheme)}, nil
}

// decode fills into, a pointer to the k8s.io/api type the route expects, from body.
func (d *protobufDecoder) decode(body []byte, into runtime.Object, s *scope) error {
	if s.strategy != nil && s.strategy.Custom() {
		return unsupportedMediaType(mediaJSON, mediaYAML)
	}
	_, gvk, err := d.serializer.Decode(body, nil, into)
	if err != nil {
		return s.cannotHandle(err)
	}
	if gvk != nil && *gvk != s.objectGVK {
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s) of %s", gvk, s.objectGVK, s.resourcePath()))
	}
	return nil
}

// protobufPayload strips kube's envelope (the "k8s\x00" magic and a runtime.Unknown) from a protobuf
// body, returning the raw message, for types such as DeleteOptions that are not in the scheme's kinds.
func protobufPayload(body []byte) []byte {
	const magic = "k8s\x00"
	if len(body) < len(magic) || string(body[:len(magic)]) != magic {
		return body
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(magic):]); err != nil {
		return body
	}
	return u.Raw
}
