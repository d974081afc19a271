// Package flowschemas is the flowcontrol.apiserver.k8s.io/v1 FlowSchema kind: stored, defaulted,
// validated and printed as kube-apiserver v1.37.2 does. The server's API Priority and Fairness filter
// (pkg/apiserver/flowcontrol.go) classifies requests by these objects and writes their status.
package flowschemas

import (
	"reflect"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
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
type strategy struct {
	kinds.StatusSubresource[*flowcontrolv1.FlowSchema, flowcontrolv1.FlowSchemaStatus, fields]
}

// fields says where the kind keeps its status and spec, for kinds.StatusSubresource.
type fields struct{}

var _ kinds.StatusFields[*flowcontrolv1.FlowSchema, flowcontrolv1.FlowSchemaStatus] = fields{}

func (fields) Status(o *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaStatus { return &o.Status }

// Spec makes the generation move on with the spec, as kube's strategy of the kind does.
func (fields) Spec(o *flowcontrolv1.FlowSchema) any { return &o.Spec }

func (strategy) Default(obj runtime.Object) { SetDefaults(obj.(*flowcontrolv1.FlowSchema)) }

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.FlowSchema))
}

func (strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.FlowSchema))
}

func (strategy) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateStatus(&obj.(*flowcontrolv1.FlowSchema).Status, field.NewPath("status"))
}
