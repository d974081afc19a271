// Package prioritylevelconfigurations is the flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration
// kind: stored, defaulted, validated and printed as kube-apiserver v1.37.2 does. The server's API
// Priority and Fairness filter (pkg/apiserver/flowcontrol.go) queues requests by these objects and
// writes their status.
package prioritylevelconfigurations

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

// Kind describes PriorityLevelConfigurations.
func Kind() kinds.Kind {
	typeDoc := flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]
	sharesDoc := flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]
	qDoc := flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()
	return kinds.Kind{
		Group:   flowcontrolv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:   "prioritylevelconfigurations",
			Singular: "prioritylevelconfiguration",
			Kind:     "PriorityLevelConfiguration",
			Verbs:    model.StandardVerbs(),
			Subresources: []model.Subresource{{Name: "status", Kind: "PriorityLevelConfiguration",
				Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: reflect.TypeFor[flowcontrolv1.PriorityLevelConfiguration]()}},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(),
				model.ComputedColumn("Type", typeDoc, 0),
				model.ComputedColumn("NominalConcurrencyShares", sharesDoc, 0),
				model.ComputedColumn("Queues", qDoc["queues"], 0),
				model.ComputedColumn("HandSize", qDoc["handSize"], 0),
				model.ComputedColumn("QueueLengthLimit", qDoc["queueLengthLimit"], 0),
				model.AgeColumn(),
			},
			GoType:     reflect.TypeFor[flowcontrolv1.PriorityLevelConfiguration](),
			ListGoType: reflect.TypeFor[flowcontrolv1.PriorityLevelConfigurationList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(),
				printers.Column("Type", typeDoc),
				printers.Column("NominalConcurrencyShares", sharesDoc),
				printers.Column("Queues", qDoc["queues"]),
				printers.Column("HandSize", qDoc["handSize"]),
				printers.Column("QueueLengthLimit", qDoc["queueLengthLimit"]),
				printers.AgeColumn(),
			},
			Cells: printers.Typed(cells),
		},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/flowcontrol/prioritylevelconfiguration/strategy.go", Version: "v1.37.2", Parts: "PrepareForCreate, PrepareForUpdate, the status strategy"},
			{Path: "pkg/apis/flowcontrol/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_ExemptPriorityLevelConfiguration, _LimitedPriorityLevelConfiguration, _QueuingConfiguration (SetDefaults)"},
			{Path: "pkg/apis/flowcontrol/validation/validation.go", Version: "v1.37.2", Parts: "ValidatePriorityLevelConfiguration and what it calls, ValidatePriorityLevelConfigurationStatusUpdate (validation.go)"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printPriorityLevelConfiguration"},
		},
	}
}

// cells are printPriorityLevelConfiguration's: the numbers as integers, <none> where a level has none.
func cells(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) []any {
	var shares, queues, handSize, queueLength any = "<none>", "<none>", "<none>", "<none>"
	if l := pl.Spec.Limited; l != nil {
		// The internal type kube prints has no pointer; decoding defaulted it to 30.
		n := DefaultNominalConcurrencyShares
		if l.NominalConcurrencyShares != nil {
			n = *l.NominalConcurrencyShares
		}
		shares = int64(n)
		if q := l.LimitResponse.Queuing; q != nil {
			queues, handSize, queueLength = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
		}
	}
	return []any{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLength, printers.Age(pl.CreationTimestamp, now)}
}

// strategy is kube's priorityLevelConfigurationStrategy and its status strategy.
type strategy struct {
	kinds.StatusSubresource[*flowcontrolv1.PriorityLevelConfiguration, flowcontrolv1.PriorityLevelConfigurationStatus, fields]
}

// fields says where the kind keeps its status and spec, for kinds.StatusSubresource.
type fields struct{}

var _ kinds.StatusFields[*flowcontrolv1.PriorityLevelConfiguration, flowcontrolv1.PriorityLevelConfigurationStatus] = fields{}

func (fields) Status(o *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfigurationStatus {
	return &o.Status
}

// Spec makes the generation move on with the spec, as kube's strategy of the kind does.
func (fields) Spec(o *flowcontrolv1.PriorityLevelConfiguration) any { return &o.Spec }

func (strategy) Default(obj runtime.Object) {
	SetDefaults(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

func (strategy) ValidateUpdate(obj, _ runtime.Object) field.ErrorList {
	return validate(obj.(*flowcontrolv1.PriorityLevelConfiguration))
}

func (strategy) ValidateStatusUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateStatus(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Status, field.NewPath("status"))
}
