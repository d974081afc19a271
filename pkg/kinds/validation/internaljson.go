package validation

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// InternalJSON is v as kube's error messages print a value of its internal types, which have no
// json tags: every exported field, named as in Go, in declaration order ({"Type":"ByColor"}). A kind
// validated on its k8s.io/api type wraps the struct values it puts in a field.Error with it.
func InternalJSON(v any) json.Marshaler { return internalJSON{v} }

type internalJSON struct{ v any }

func (i internalJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeGoFields(&b, reflect.ValueOf(i.v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeGoFields(b *bytes.Buffer, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("null")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return writeGoFields(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			name, _ := json.Marshal(f.Name)
			b.Write(name)
			b.WriteByte(':')
			if err := writeGoFields(b, v.Field(i)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeGoFields(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		raw, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		b.Write(raw)
	}
	return nil
}
