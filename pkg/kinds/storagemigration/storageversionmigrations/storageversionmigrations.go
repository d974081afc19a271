// Package storageversionmigrations is the storagemigration.k8s.io/v1 StorageVersionMigration kind and
// its migrator, kube-controller-manager's storage-version-migrator-controller: a migration names a
// resource, and the migrator rewrites every object of it, so that each is stored again in the
// resource's current storage version, reporting in the migration's status conditions.
package storageversionmigrations

import (
	"reflect"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// ControllerName is kube-controller-manager's name for the migrator.
const ControllerName = "storage-version-migrator-controller"

// Kind describes StorageVersionMigrations.
func Kind() kinds.Kind {
	typ := reflect.TypeFor[svmv1.StorageVersionMigration]()
	return kinds.Kind{
		Group:   svmv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:   "storageversionmigrations",
			Singular: "storageversionmigration",
			Kind:     "StorageVersionMigration",
			Verbs:    model.StandardVerbs(),
			Subresources: []model.Subresource{
				{Name: "status", Kind: "StorageVersionMigration", Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate}, GoType: typ},
			},
			PrinterColumns: []model.PrinterColumn{
				// kube's printer gives the Name column no "name" format, unlike most.
				{Name: "Name", Type: "string", Description: model.ObjectMetaDoc("name"), JSONPath: ".metadata.name"},
				model.ComputedColumn("Resource", "GroupResource to migrate", 0),
				model.ComputedColumn("Status", "Status of the migration", 0),
			},
			// kube-apiserver v1.37.2 still encodes migrations to etcd as v1beta1, and discovery's
			// hash names the storage version.
			StorageVersionHash: model.StorageVersionHash(svmv1.GroupName, "v1beta1", "StorageVersionMigration"),
			GoType:             typ,
			ListGoType:         reflect.TypeFor[svmv1.StorageVersionMigrationList](),
		},
		Strategy: strategy{},
		Table: &kinds.Table{
			Columns: []metav1.TableColumnDefinition{
				printers.Column("Name", printers.ObjectMetaDoc("name")),
				printers.Column("Resource", "GroupResource to migrate"),
				printers.Column("Status", "Status of the migration"),
			},
			Cells: printers.Typed(cells),
		},
		// AllowUnconditionalUpdate is false in kube's strategy.
		Store:       kinds.StoreRules{RequireResourceVersion: true},
		Controllers: []kinds.Controller{{Name: ControllerName, New: newController}},
		Upstream: []kinds.Upstream{
			{Path: "pkg/registry/storagemigration/storagemigration/strategy.go", Version: "v1.37.2", Parts: "strategy, statusStrategy"},
			{Path: "pkg/apis/storagemigration/validation/validation.go", Version: "v1.37.2", Parts: "ValidateStorageVersionMigration, ...Update, ...StatusUpdate (validation.go)"},
			{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printStorageVersionMigration"},
			{Path: "pkg/controller/storageversionmigrator/migrationrunner.go", Version: "v1.37.2", Parts: "MigrationRunnerController (runner.go)"},
			{Path: "pkg/controller/storageversionmigrator/resourceversion.go", Version: "v1.37.2", Parts: "ResourceVersionController (resourceversion.go)"},
			{Path: "pkg/controller/storageversionmigrator/storageversionmigrator.go", Version: "v1.37.2", Parts: "SVMController (migrator.go)"},
		},
	}
}

// cells are printStorageVersionMigration's: the resource and the last true condition of the three
// the migrator sets, Unknown when none is.
func cells(svm *svmv1.StorageVersionMigration, _ time.Time) []any {
	status := "Unknown"
	for _, c := range svm.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch svmv1.MigrationConditionType(c.Type) {
		case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
			status = c.Type
		}
	}
	return []any{svm.Name, svm.Spec.Resource.String(), status}
}

// strategy is kube's StorageVersionMigration strategy: the status is the migrator's, written through
// the status subresource only, and the spec never changes.
type strategy struct {
	kinds.StatusSubresource[*svmv1.StorageVersionMigration, svmv1.StorageVersionMigrationStatus, fields]
}

// fields says where the kind keeps its status and spec, for kinds.StatusSubresource.
type fields struct{}

var _ kinds.StatusFields[*svmv1.StorageVersionMigration, svmv1.StorageVersionMigrationStatus] = fields{}

func (fields) Status(o *svmv1.StorageVersionMigration) *svmv1.StorageVersionMigrationStatus {
	return &o.Status
}

// Spec is nil: kube's strategy of the kind leaves the generation alone.
func (fields) Spec(*svmv1.StorageVersionMigration) any { return nil }

func (strategy) Validate(obj runtime.Object) field.ErrorList {
	return validateSpec(obj.(*svmv1.StorageVersionMigration))
}

func (strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validateUpdate(obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration))
}

func (strategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return validateStatusUpdate(obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration))
}

var _ kinds.StatusStrategy = strategy{}
