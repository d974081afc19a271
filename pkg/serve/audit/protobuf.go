package audit

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/apictl/apictl/pkg/registry"
)

// mediaProtobuf is kube's protobuf encoding, which kubectl's typed clients send
// (kubectl create configmap, create namespace).
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protobufToJSON turns protobuf request bodies of the built-in kinds the server reads into the JSON
// kube logs for them: the typed object encoded as JSON.
type protobufToJSON struct {
	decoder *protobuf.Serializer
	encoder *json.Serializer
}

func newProtobufToJSON() (*protobufToJSON, error) {
	scheme, err := registry.BuiltinScheme()
	if err != nil {
		return nil, err
	}
	return &protobufToJSON{
		decoder: protobuf.NewSerializer(scheme, scheme),
		encoder: json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{}),
	}, nil
}

// object converts an object body.
func (p *protobufToJSON) object(body []byte) ([]byte, error) {
	obj, gvk, err := p.decoder.Decode(body, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding the protobuf request object: %w", err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	var b bytes.Buffer
	if err := p.encoder.Encode(obj, &b); err != nil {
		return nil, fmt.Errorf("encoding the request object as JSON: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// deleteOptions reads protobuf delete options, which are not among the scheme's kinds: the message
// inside kube's envelope (the "k8s\x00" magic and a runtime.Unknown).
func (p *protobufToJSON) deleteOptions(body []byte, opts *metav1.DeleteOptions) error {
	const magic = "k8s\x00"
	if !bytes.HasPrefix(body, []byte(magic)) {
		return fmt.Errorf("the protobuf delete options lack kube's envelope")
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(magic):]); err != nil {
		return fmt.Errorf("reading the protobuf envelope: %w", err)
	}
	if err := opts.Unmarshal(u.Raw); err != nil {
		return fmt.Errorf("reading the protobuf delete options: %w", err)
	}
	return nil
}
