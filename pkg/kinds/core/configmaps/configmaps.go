// Package configmaps is the core v1 ConfigMap kind: its route-model entry, validation and printer.
package configmaps

import (
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/kinds/validation"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes ConfigMaps.
func Kind() kinds.Kind {
	doc := corev1.ConfigMap{}.SwaggerDoc()
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "configmaps",
			Singular:   "configmap",
			Kind:       "ConfigMap",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"cm"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("Data", doc["data"], 0), model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[corev1.ConfigMap](),
			ListGoType: reflect.TypeFor[corev1.ConfigMapList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("Data", doc["data"]), printers.AgeColumn()},
			Cells:   printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateConfigMap, ValidateConfigMapUpdate"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printConfigMap"},
		},
	}
}

func cells(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), printers.Age(cm.CreationTimestamp, now)}
}

// strategy is kube's ConfigMap strategy: nothing to prepare, the keys and the size to validate.
type strategy struct{}

func (strategy) PrepareForCreate(runtime.Object)                 {}
func (strategy) PrepareForUpdate(runtime.Object, runtime.Object) {}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	var errs field.ErrorList
	total := 0
	for key, value := range cm.Data {
		errs = append(errs, validation.DataKey(key, field.NewPath("data").Key(key))...)
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(value)
	}
	for key, value := range cm.BinaryData {
		errs = append(errs, validation.DataKey(key, field.NewPath("binaryData").Key(key))...)
		total += len(value)
	}
	if total > validation.MaxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", validation.MaxDataSize))
	}
	return errs
}

func (s strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	cm, oldCM := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	errs := s.Validate(obj)
	errs = append(errs, validation.ImmutableData(oldCM.Immutable, cm.Immutable,
		!reflect.DeepEqual(cm.Data, oldCM.Data), !reflect.DeepEqual(cm.BinaryData, oldCM.BinaryData), "binaryData")...)
	return errs
}
