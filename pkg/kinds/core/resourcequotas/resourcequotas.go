// Package resourcequotas is the core v1 ResourceQuota kind, as kube-apiserver v1.37.2 serves it and
// kube-controller-manager keeps it: its route-model entry, strategy, validation and printer, the
// quota evaluators that admission and the controller share (evaluators.go), and the
// resourcequota-controller, which recalculates status.used (controller.go, monitor.go).
//
// Ported from k8s.io/kubernetes v1.37.2 pkg/registry/core/resourcequota/strategy.go (the strategy)
// and pkg/printers/internalversion/printers.go (printResourceQuota).
package resourcequotas

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Column descriptions of kube's printer.
const (
	requestDoc = "Request represents a minimum amount of cpu/memory that a container may consume."
	limitDoc   = "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."
)

// Kind describes ResourceQuotas.
func Kind() kinds.Kind {
	rq := reflect.TypeFor[corev1.ResourceQuota]()
	return kinds.Kind{
		Group:   corev1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:     "resourcequotas",
			Singular:   "resourcequota",
			Kind:       "ResourceQuota",
			Namespaced: true,
			Verbs:      model.StandardVerbs(),
			ShortNames: []string{"quota"},
			PrinterColumns: []model.PrinterColumn{
				model.NameColumn(), model.ComputedColumn("Request", requestDoc, 0),
				model.ComputedColumn("Limit", limitDoc, 0), model.AgeColumn(),
			},
			Subresources: []model.Subresource{{Name: "status", Kind: "ResourceQuota",
				Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: rq}},
			GoType:     rq,
			ListGoType: reflect.TypeFor[corev1.ResourceQuotaList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.NameColumn(), printers.Column("Request", requestDoc), printers.Column("Limit", limitDoc), printers.AgeColumn(),
			},
			Cells: printers.Typed(cells),
		},
		// kube's store for resource quotas answers a delete with the object.
		Store:       kinds.StoreRules{ReturnDeletedObject: true},
		Controllers: []kinds.Controller{{Name: ControllerName, New: newController}},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/core/resourcequota/strategy.go", Version: "v1.37.2", Parts: "status reset on create and update, status strategy"},
			{Path: "pkg/registry/core/resourcequota/storage/storage.go", Version: "v1.37.2", Parts: "ReturnDeletedObject, short name"},
			{Path: "pkg/apis/core/validation/validation.go", Version: "v1.37.2", Parts: "ValidateResourceQuota, ValidateResourceQuotaUpdate, ValidateResourceQuotaStatusUpdate and the parts they call (validation.go)"},
			{Path: "pkg/apis/core/helper/helpers.go", Version: "v1.37.2", Parts: "the quota resource names and scopes (validation.go)"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printResourceQuota"},
			{Path: "pkg/quota/v1/evaluator/core/services.go", Version: "v1.37.2", Parts: "the services evaluator (evaluators.go)"},
			{Path: "pkg/quota/v1/evaluator/core/registry.go", Version: "v1.37.2", Parts: "NewEvaluators' legacy object count aliases (evaluators.go)"},
			{Path: "pkg/quota/v1/install/registry.go", Version: "v1.37.2", Parts: "the ignored resources (evaluators.go)"},
			{Path: "pkg/quota/v1/install/update_filter.go", Version: "v1.37.2", Parts: "DefaultUpdateFilter for services (evaluators.go)"},
			{Path: "pkg/controller/resourcequota/resource_quota_controller.go", Version: "v1.37.2", Parts: "the quota controller (controller.go)"},
			{Path: "pkg/controller/resourcequota/resource_quota_monitor.go", Version: "v1.37.2", Parts: "the quota monitor (monitor.go)"},
			{Path: "cmd/kube-controller-manager/app/core.go", Version: "v1.37.2", Parts: "newResourceQuotaController (controller.go)"},
		},
	}
}

// cells are printResourceQuota's: each resource of status.hard as used/hard, the limits.* ones in
// LIMIT and the others in REQUEST, sorted by name.
func cells(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var request, limit strings.Builder
	for _, name := range names {
		w := &request
		if pieces := strings.Split(name, "."); len(pieces) > 1 && pieces[0] == "limits" {
			w = &limit
		}
		used, hard := q.Status.Used[corev1.ResourceName(name)], q.Status.Hard[corev1.ResourceName(name)]
		fmt.Fprintf(w, "%s: %s/%s, ", name, used.String(), hard.String())
	}
	return []any{q.Name, strings.TrimSuffix(request.String(), ", "), strings.TrimSuffix(limit.String(), ", "),
		printers.Age(q.CreationTimestamp, now)}
}

// strategy is kube's resourcequotaStrategy and resourcequotaStatusStrategy: status is the
// controller's and admission's, written only through the status subresource, which keeps the spec.
type strategy struct {
	kinds.StatusSubresource[*corev1.ResourceQuota, corev1.ResourceQuotaStatus, fields]
}

// fields says where the kind keeps its status and spec, for kinds.StatusSubresource.
type fields struct{}

var _ kinds.StatusFields[*corev1.ResourceQuota, corev1.ResourceQuotaStatus] = fields{}

func (fields) Status(o *corev1.ResourceQuota) *corev1.ResourceQuotaStatus { return &o.Status }

// Spec is nil: kube's strategy of the kind leaves the generation alone.
func (fields) Spec(*corev1.ResourceQuota) any { return nil }

var (
	_ kinds.StatusStrategy = strategy{}
	_ kinds.Warner         = strategy{}
)

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	errs := validateSpec(&q.Spec, field.NewPath("spec"))
	return append(errs, validateStatus(&q.Status, field.NewPath("status"))...)
}

func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validateUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}

// knownResourceNames are the resources whose request a quota's limit should not be below.
var knownResourceNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage}

// WarningsOnCreate warns of a quota whose requests.<resource> (for cpu and memory also the bare
// name) exceeds its limits.<resource>: no pod could use the requests.
func (strategy) WarningsOnCreate(obj runtime.Object) []string {
	hard := obj.(*corev1.ResourceQuota).Spec.Hard
	var warnings []string
	for _, name := range knownResourceNames {
		requestName := corev1.ResourceName("requests." + string(name))
		request, requestOK := hard[requestName]
		if !requestOK && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			if request, requestOK = hard[name]; requestOK {
				requestName = name
			}
		}
		limitName := corev1.ResourceName("limits." + string(name))
		if limit, limitOK := hard[limitName]; requestOK && limitOK && request.Cmp(limit) > 0 {
			warnings = append(warnings, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)",
				requestName, request.String(), limitName, limit.String()))
		}
	}
	return warnings
}

// WarningsOnUpdate has none, as kube's.
func (strategy) WarningsOnUpdate(runtime.Object, runtime.Object) []string { return nil }

// PrepareForStatusUpdate keeps the stored spec and takes the rest from the write, metadata
// included: kube's status strategy for quotas resets only the spec (it does not call
// ResetObjectMetaForStatus), so labels written through status are kept, as on kube-apiserver.
func (strategy) PrepareForStatusUpdate(obj, old runtime.Object) runtime.Object {
	out, oldQ := obj.(*corev1.ResourceQuota).DeepCopy(), old.(*corev1.ResourceQuota)
	out.Spec = *oldQ.Spec.DeepCopy()
	// What the generic store keeps of the stored metadata on every update.
	if out.ResourceVersion == "" {
		out.ResourceVersion = oldQ.ResourceVersion
	}
	out.UID, out.CreationTimestamp, out.Generation = oldQ.UID, oldQ.CreationTimestamp, oldQ.Generation
	out.DeletionTimestamp, out.DeletionGracePeriodSeconds = oldQ.DeletionTimestamp, oldQ.DeletionGracePeriodSeconds
	//lint:ignore SA1019 kube's strategy clears the legacy field too.
	out.SelfLink = ""
	return out
}

func (strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return validateStatusUpdate(obj.(*corev1.ResourceQuota))
}
