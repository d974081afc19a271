package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// bodyRecorder keeps a copy of what the handler reads of the request body, up to limit; a larger
// body is not recorded at all rather than recorded in part.
type bodyRecorder struct {
	io.ReadCloser
	buf   bytes.Buffer
	limit int
	over  bool
}

func (b *bodyRecorder) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.over {
		if b.buf.Len()+n > b.limit {
			b.over = true
			b.buf = bytes.Buffer{}
		} else {
			b.buf.Write(p[:n])
		}
	}
	return n, err
}

// recorded returns the body as read, nil when nothing (or too much) was read.
func (b *bodyRecorder) recorded() []byte {
	if b == nil || b.over || b.buf.Len() == 0 {
		return nil
	}
	return b.buf.Bytes()
}

// objectMeta is the part of a request object's metadata that completes an event's objectRef.
type objectMeta struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// needsBody reports whether an event at level needs the request body: kube logs the object a create
// or update sends (its metadata even at Metadata level, for the objectRef), the patch, and the
// delete options.
func needsBody(verb string, request bool) bool {
	switch verb {
	case "create", "update":
		return true
	case "patch", "delete", "deletecollection":
		return request
	}
	return false
}

// The delete options kube logs say this apiVersion: they are its internal meta version.
const deleteOptionsAPIVersion = "meta.k8s.io/__internal"

// requestObject turns what the handler read into the JSON object kube logs for verb, and the
// metadata that completes the objectRef. Protobuf objects are re-encoded as JSON, as kube logs them.
func (p *protobufToJSON) requestObject(verb, contentType string, body []byte) (obj []byte, meta *objectMeta, err error) {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch verb {
	case "create", "update":
		if mediaType == mediaProtobuf {
			obj, err = p.object(body)
		} else {
			obj, err = toJSON(mediaType, body)
		}
		if obj == nil || err != nil {
			return nil, nil, err
		}
		var m struct {
			Metadata objectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(obj, &m); err != nil {
			return nil, nil, fmt.Errorf("reading the request object's metadata: %w", err)
		}
		return obj, &m.Metadata, nil
	case "patch":
		// kube logs the patch as it came; an apply patch may be YAML, which the JSON event cannot embed.
		if mediaType == "application/apply-patch+yaml" {
			obj, err = yaml.YAMLToJSON(body)
			return obj, nil, err
		}
		return body, nil, nil
	case "delete", "deletecollection":
		// kube logs delete options only when they came as a body, not from the query.
		var opts metav1.DeleteOptions
		if mediaType == mediaProtobuf {
			if err := p.deleteOptions(body, &opts); err != nil {
				return nil, nil, err
			}
		} else {
			js, err := toJSON(mediaType, body)
			if js == nil || err != nil {
				return nil, nil, err
			}
			if err := json.Unmarshal(js, &opts); err != nil {
				return nil, nil, fmt.Errorf("reading the delete options: %w", err)
			}
		}
		opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: deleteOptionsAPIVersion}
		obj, err = json.Marshal(&opts)
		return obj, nil, err
	}
	return nil, nil, nil
}

// toJSON returns a JSON or YAML body as JSON; nil for other media types.
func toJSON(mediaType string, body []byte) ([]byte, error) {
	switch mediaType {
	case "", "application/json":
		return body, nil
	case "application/yaml":
		return yaml.YAMLToJSON(body)
	}
	return nil, nil
}

// stripManagedFields removes metadata.managedFields from a JSON object, the items of a list and the
// rows of a Table, keeping every other byte's order, as kube's omitManagedFields does.
func stripManagedFields(raw []byte) ([]byte, error) {
	if !bytes.Contains(raw, []byte(`"managedFields"`)) {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := copyJSON(dec, &out, false); err != nil {
		return nil, fmt.Errorf("removing managed fields: %w", err)
	}
	return out.Bytes(), nil
}

// copyJSON copies the next value from dec to out; under a "metadata" key (isMetadata) an object
// loses its managedFields.
func copyJSON(dec *json.Decoder, out *bytes.Buffer, isMetadata bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := byte(']')
		if t == '{' {
			closing = '}'
		}
		out.WriteByte(byte(t))
		for first := true; dec.More(); {
			if t == '{' {
				keyTok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := keyTok.(string)
				if isMetadata && key == "managedFields" {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				if !first {
					out.WriteByte(',')
				}
				writeJSON(out, key)
				out.WriteByte(':')
				if err := copyJSON(dec, out, key == "metadata"); err != nil {
					return err
				}
			} else {
				if !first {
					out.WriteByte(',')
				}
				if err := copyJSON(dec, out, false); err != nil {
					return err
				}
			}
			first = false
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		out.WriteByte(closing)
	case json.Number:
		out.WriteString(t.String())
	default:
		writeJSON(out, t)
	}
	return nil
}

func writeJSON(out *bytes.Buffer, v any) {
	b, _ := json.Marshal(v) // strings, booleans and null always encode
	out.Write(b)
}
