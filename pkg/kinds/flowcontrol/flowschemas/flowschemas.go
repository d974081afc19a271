// Package flowschemas is the flowcontrol.apiserver.k8s.io/v1 FlowSchema kind: stored, defaulted,
// validated and printed as kube-apiserver v1.37.2 does. The server's API Priority and Fairness filter
// (pkg/apiserver/flowcontrol.go) classifies requests by these objects and writes their status.
package flowschemas

import (
	"reflect"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Kind describes FlowSchemas.
func Kind() kinds.Kind {
	specDoc := flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()
	plDoc := flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]
	const missingPLDoc = "references a broken or non-existent PriorityLevelConfiguration"
	return kinds.Kind{
		Group:   flowcontrolv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:   "flowschemas",
			Singular: "flowschema",
			Kind:     "FlowSchema",
			Verbs:    model.StandardVerbs(),
			Subresources: []model.Subresource{{Name: "status", Kind: "FlowSchema",
				Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: reflect.TypeFor[flowcontrolv1.FlowSchema]()}},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(),
				model.ComputedColumn("PriorityLevel", plDoc, 0),
				model.ComputedColumn("MatchingPrecedence", specDoc["matchingPrecedence"], 0),
				model.ComputedColumn("DistinguisherMethod", specDoc["distinguisherMethod"], 0),
				model.AgeColumn(),
				model.ComputedColumn("MissingPL", missingPLDoc, 0),
			},
			GoType:     reflect.TypeFor[flowcontrolv1.FlowSchema](),
			ListGoType: reflect.TypeFor[flowcontrolv1.FlowSchemaList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("PriorityLevel", plDoc),
				printers.Column("MatchingPrecedence", specDoc["matchingPrecedence"]),
				printers.Column("DistinguisherMethod", specDoc["distinguisherMethod"]),
				printers.AgeColumn(),
				printers.Column("MissingPL", missingPLDoc),
			},
			Cells: printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/flowcontrol/flowschema/strategy.go", Version: "v1.37.2", Parts: "PrepareForCreate, PrepareForUpdate, the status strategy"},
			{Path: "pkg/apis/flowcontrol/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_FlowSchemaSpec"},
			{Path: "pkg/apis/flowcontrol/validation/validation.go", Version: "v1.37.2", Parts: "ValidateFlowSchema and what it calls, ValidateFlowSchemaStatusUpdate (validation.go)"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printFlowSchema"},
		},
	}
}

// cells are printFlowSchema's. kube's list printer also sorts the rows by matching precedence; a
// kinds.Table prints one object at a time, so a list keeps the store's order (by name).
func cells(fs *flowcontrolv1.FlowSchema, now time.Time) []any {
	method := "<none>"
	if fs.Spec.DistinguisherMethod != nil {
		method = string(fs.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
		printers.Age(fs.CreationTimestamp, now), missing}
}

// DefaultMatchingPrecedence is what a FlowSchema without one gets.
const DefaultMatchingPrecedence int32 = 1000

// SetDefaults is SetDefaults_FlowSchemaSpec, the only default of the kind.
func SetDefaults(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = DefaultMatchingPrecedence
	}
}

// strategy is kube's flowSchemaStrategy and flowSchemaStatusStrategy.
type strategy struct{}

func (strategy) Default(obj runtime.Object) { SetDefaults(obj.(*flowcontrolv1.FlowSchema)) }

// PrepareForCreate drops the status, which only the config controller writes, and starts the
// generation at 1.
func (strategy) PrepareForCreate(obj runtime.Object) {
	fs := obj.(*flowcontrolv1.FlowSchema)
	fs.Status = flowcontrolv1.FlowSchemaStatus{}
	fs.Generation = 1
}

// PrepareForUpdate keeps the status and moves the generation on when the spec changed.
func (strategy) PrepareForUpdate(obj, old runtime.Object) {
	fs, oldFS := obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema)
	if !apiequality.Semantic.DeepEqual(fs.Spec, oldFS.Spec) {
		fs.Generation = oldFS.Generation + 1
	}
	fs.Status = oldFS.Status
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.FlowSchema))
}

func (strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.FlowSchema))
}

// PrepareForStatusUpdate keeps everything of old but the status.
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out := old.(*flowcontrolv1.FlowSchema).DeepCopy()
	out.Status = obj.(*flowcontrolv1.FlowSchema).Status
	return out
}

func (strategy) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateStatus(&obj.(*flowcontrolv1.FlowSchema).Status, field.NewPath("status"))
}
