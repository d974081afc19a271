// Package podtemplates is the core v1 PodTemplate kind, served as data as kube's generic control
// plane serves it: stored, defaulted, validated and printed as kube-apiserver v1.37.2 does (no pods
// are made from it here).
package podtemplates

import (
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes PodTemplates.
func Kind() kinds.Kind {
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "podtemplates",
			Singular:   "podtemplate",
			Kind:       "PodTemplate",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(),
				model.ComputedColumn("Containers", "Names of each container in the template.", 0),
				model.ComputedColumn("Images", "Images referenced by each container in the template.", 0),
				model.ComputedColumn("Pod Labels", "The labels for the pod template.", 0),
			},
			GoType:     reflect.TypeFor[corev1.PodTemplate](),
			ListGoType: reflect.TypeFor[corev1.PodTemplateList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			// kube's printer has no Age column for pod templates.
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("Containers", "Names of each container in the template."),
				printers.Column("Images", "Images referenced by each container in the template."),
				printers.Column("Pod Labels", "The labels for the pod template."),
			},
			Cells: printers.Typed(cells),
		},
		Store: kinds.StoreRules{ReturnDeletedObject: true},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/core/podtemplate/strategy.go", Version: "v1.37.2", Parts: "generation on create and template change"},
			{Path: "pkg/registry/core/podtemplate/storage/storage.go", Version: "v1.37.2", Parts: "ReturnDeletedObject"},
			{Path: "pkg/apis/core/v1/zz_generated.defaults.go", Version: "v1.37.2", Parts: "SetObjectDefaults_PodTemplate (defaults.go)"},
			{Path: "pkg/apis/core/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_PodSpec, _Container, _Volume, _Probe and the rest SetObjectDefaults_PodTemplate calls"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidatePodTemplate and the parts of ValidatePodTemplateSpec in validation.go"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printPodTemplate, layoutContainerCells"},
		},
	}
}

// cells are printPodTemplate's: the containers' names and images (init containers are not shown) and
// the template's labels.
func cells(pt *corev1.PodTemplate, _ time.Time) []any {
	names := make([]string, len(pt.Template.Spec.Containers))
	images := make([]string, len(pt.Template.Spec.Containers))
	for i, c := range pt.Template.Spec.Containers {
		names[i], images[i] = c.Name, c.Image
	}
	return []any{pt.Name, strings.Join(names, ","), strings.Join(images, ","), labels.FormatLabels(pt.Template.Labels)}
}

// strategy is kube's podTemplateStrategy. No feature-gated field is dropped: every gate such a field
// hangs on is on by default in v1.37, and apictl has no gates to turn them off.
type strategy struct{}

func (strategy) Default(obj runtime.Object) { setDefaults(obj.(*corev1.PodTemplate)) }

// PrepareForCreate starts the generation at 1, whatever the client sent.
func (strategy) PrepareForCreate(obj runtime.Object) { obj.(*corev1.PodTemplate).Generation = 1 }

// PrepareForUpdate moves the generation on when the template changed; the store has already kept the
// stored generation.
func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	pt, oldPT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	if !apiequality.Semantic.DeepEqual(pt.Template, oldPT.Template) {
		pt.Generation = oldPT.Generation + 1
	}
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateTemplateSpec(&obj.(*corev1.PodTemplate).Template, field.NewPath("template"))
}

func (strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateTemplateSpec(&obj.(*corev1.PodTemplate).Template, field.NewPath("template"))
}
