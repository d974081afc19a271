// Package secrets is the core v1 Secret kind: its route-model entry, decoding defaults, validation
// and printer.
package secrets

import (
	"encoding/json"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/kinds/validation"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes Secrets.
func Kind() kinds.Kind {
	doc := corev1.Secret{}.SwaggerDoc()
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "secrets",
			Singular:   "secret",
			Kind:       "Secret",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.PathColumn("Type", doc["type"], 0, ".type"), model.ComputedColumn("Data", doc["data"], 0), model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[corev1.Secret](),
			ListGoType: reflect.TypeFor[corev1.SecretList](),
		},
		Strategy: strategy{},
		Fields:   &kinds.FieldSelectors{Names: []string{"type"}, New: func() kinds.FieldReading { return new(reading) }},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("Type", doc["type"]), printers.Column("Data", doc["data"]), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/core/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_Secret"},
			{Path: "pkg/apis/core/v1/conversion.go", Version: "v1.37.2", Parts: "Convert_v1_Secret_To_core_Secret (stringData into data)"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateSecret, ValidateSecretUpdate"},
			{Path: "pkg/registry/core/secret/strategy.go", Version: "v1.37.2", Parts: "SelectableFields"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printSecret"},
		},
	}
}

// reading is what a stored Secret is selected by (kube's SelectableFields: its type).
type reading struct {
	kinds.SelectableMeta
	Type string `json:"type"`
}

func (r *reading) AddFields(set fields.Set) { set["type"] = r.Type }

// cells counts the keys of data and stringData together: kube prints the internal object, in which
// stringData has been merged into data.
func cells(s *corev1.Secret, now time.Time) []any {
	n := len(s.Data)
	for k := range s.StringData {
		if _, ok := s.Data[k]; !ok {
			n++
		}
	}
	return []any{s.Name, string(s.Type), int64(n), printers.Age(s.CreationTimestamp, now)}
}

// strategy merges stringData into data and defaults the type, as kube's conversion and defaulting
// do, and checks the keys each well-known type requires.
type strategy struct{}

// Default folds stringData into data and defaults the type as the Secret is decoded: kube does both
// while decoding (SetDefaults_Secret, then the conversion to its internal type), before the field
// manager records the write, so managedFields hold f:data/f:<key> and f:type rather than
// f:stringData.
func (strategy) Default(obj runtime.Object) { normalize(obj.(*corev1.Secret)) }

func (strategy) PrepareForCreate(obj runtime.Object) { normalize(obj.(*corev1.Secret)) }

func (strategy) PrepareForUpdate(obj, _ runtime.Object) { normalize(obj.(*corev1.Secret)) }

func normalize(s *corev1.Secret) {
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Secret)
	var errs field.ErrorList
	total := 0
	for key, value := range s.Data {
		errs = append(errs, validation.DataKey(key, field.NewPath("data").Key(key))...)
		total += len(value)
	}
	if total > validation.MaxDataSize {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", validation.MaxDataSize))
	}
	requireKey := func(key string) {
		if _, ok := s.Data[key]; !ok {
			errs = append(errs, field.Required(field.NewPath("data").Key(key), ""))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		requireKey(corev1.DockerConfigKey)
		errs = append(errs, validJSON(s.Data, corev1.DockerConfigKey)...)
	case corev1.SecretTypeDockerConfigJson:
		requireKey(corev1.DockerConfigJsonKey)
		errs = append(errs, validJSON(s.Data, corev1.DockerConfigJsonKey)...)
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(field.NewPath("data").Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(field.NewPath("data").Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(field.NewPath("data").Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		requireKey(corev1.TLSCertKey)
		requireKey(corev1.TLSPrivateKeyKey)
	}
	return errs
}

// validJSON never echoes the value: it is secret.
func validJSON(data map[string][]byte, key string) field.ErrorList {
	value, ok := data[key]
	if !ok {
		return nil
	}
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("data").Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

func (s strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	sec, oldSec := obj.(*corev1.Secret), old.(*corev1.Secret)
	errs := s.Validate(obj)
	if sec.Type != oldSec.Type {
		errs = append(errs, field.Invalid(field.NewPath("type"), sec.Type, "field is immutable"))
	}
	errs = append(errs, validation.ImmutableData(oldSec.Immutable, sec.Immutable, !reflect.DeepEqual(sec.Data, oldSec.Data), false, "")...)
	return errs
}
