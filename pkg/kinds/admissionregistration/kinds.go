// Package admissionregistration is admissionregistration.k8s.io/v1's six kinds, a group's small kinds
// in one package: the webhook configurations and the admission policies with their bindings. Each
// has its route-model entry, kube's strategy (pkg/registry/admissionregistration/*), its v1 defaults,
// its validation, which lives in k8s.io/kubernetes and is therefore written again here on the v1
// types, message for message (validation.go, policyvalidation.go, bindingvalidation.go), and its
// printer. What runs the configured webhooks and policies is pkg/admission.
package admissionregistration

import (
	"reflect"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apictl/apictl/pkg/kinds"
	"github.com/apictl/apictl/pkg/kinds/printers"
	"github.com/apictl/apictl/pkg/routes/model"
)

// Descriptions of kube's printer columns.
const (
	webhooksDoc    = "Webhooks indicates the number of webhooks registered in this configuration"
	paramKindDoc   = "ParamKind specifies the kind of resources used to parameterize this policy"
	policyNameDoc  = "PolicyName indicates the policy definition which the policy binding binded to"
	paramRefDoc    = "ParamRef indicates the param resource which sets the configuration param"
	validationsDoc = "Validations indicates the number of validation rules defined in this configuration"
	mutationsDoc   = "Mutation indicates the number of mutations rules defined in this configuration"
)

// kind is what the six share: cluster-scoped, in the api-extensions category, and refused an update
// without a resourceVersion.
func kind[T, L any](plural, singular, name string, strategy kinds.Strategy, table *kinds.Table, columns ...model.PrinterColumn) kinds.Kind {
	return kinds.Kind{
		Group:   admissionregistrationv1.GroupName,
		Version: "v1",
		Resource: model.Resource{
			Plural:         plural,
			Singular:       singular,
			Kind:           name,
			Verbs:          model.StandardVerbs(),
			Categories:     []string{"api-extensions"},
			PrinterColumns: columns,
			GoType:         reflect.TypeFor[T](),
			ListGoType:     reflect.TypeFor[L](),
		},
		Strategy: strategy,
		Table:    table,
		Store:    kinds.StoreRules{RequireResourceVersion: true},
		Upstream: upstream,
	}
}

var upstream = []kinds.Upstream{
	{Path: "pkg/apis/admissionregistration/v1/defaults.go", Version: "v1.37.2", Parts: "SetDefaults_ValidatingWebhook, SetDefaults_MutatingWebhook, SetDefaults_Rule, the policies' and bindings' defaults (defaults.go)"},
	{Path: "pkg/apis/admissionregistration/validation/validation.go", Version: "v1.37.2", Parts: "the webhook configurations', policies' and bindings' validation (validation.go, policyvalidation.go, bindingvalidation.go, cel.go)"},
	{Path: "pkg/registry/admissionregistration", Version: "v1.37.2", Parts: "the six strategies (strategies.go)"},
	{Path: "pkg/printers/internalversion/printers.go", Version: "v1.37.2", Parts: "printValidatingWebhook, printMutatingWebhook, printValidatingAdmissionPolicy, printMutatingAdmissionPolicy and their bindings' printers"},
}

func count(name, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "integer", Description: description}
}

// integerColumn is a computed column of kube's printers that holds a count.
func integerColumn(name, description string) model.PrinterColumn {
	return model.PrinterColumn{Name: name, Type: "integer", Description: description}
}

// webhooksTable is kube's printer of a webhook configuration: its name, webhook count and age.
func webhooksTable(cells func(runtime.Object, time.Time) ([]any, error)) *kinds.Table {
	return &kinds.Table{
		Columns: []metav1.TableColumnDefinition{printers.NameColumn(), count("Webhooks", webhooksDoc), printers.AgeColumn()},
		Cells:   cells,
	}
}

// ValidatingWebhookConfigurationKind describes ValidatingWebhookConfigurations.
func ValidatingWebhookConfigurationKind() kinds.Kind {
	return kind[admissionregistrationv1.ValidatingWebhookConfiguration, admissionregistrationv1.ValidatingWebhookConfigurationList](
		"validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration",
		validatingWebhookRules(newCELCompilers()),
		webhooksTable(printers.Typed(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
			return []any{c.Name, int64(len(c.Webhooks)), printers.Age(c.CreationTimestamp, now)}
		})),
		model.NameColumn(), integerColumn("Webhooks", webhooksDoc), model.AgeColumn())
}

// MutatingWebhookConfigurationKind describes MutatingWebhookConfigurations.
func MutatingWebhookConfigurationKind() kinds.Kind {
	return kind[admissionregistrationv1.MutatingWebhookConfiguration, admissionregistrationv1.MutatingWebhookConfigurationList](
		"mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration",
		mutatingWebhookRules(newCELCompilers()),
		webhooksTable(printers.Typed(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
			return []any{c.Name, int64(len(c.Webhooks)), printers.Age(c.CreationTimestamp, now)}
		})),
		model.NameColumn(), integerColumn("Webhooks", webhooksDoc), model.AgeColumn())
}

// ValidatingAdmissionPolicyKind describes ValidatingAdmissionPolicies: of the policies only they
// have a status subresource in kube 1.37 (type checking results).
func ValidatingAdmissionPolicyKind() kinds.Kind {
	k := kind[admissionregistrationv1.ValidatingAdmissionPolicy, admissionregistrationv1.ValidatingAdmissionPolicyList](
		"validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy",
		validatingPolicyRules{compilers: newCELCompilers()},
		&kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), count("Validations", validationsDoc), printers.Column("ParamKind", paramKindDoc), printers.AgeColumn()},
			Cells: printers.Typed(func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
				return []any{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), printers.Age(p.CreationTimestamp, now)}
			}),
		},
		model.NameColumn(), integerColumn("Validations", validationsDoc), model.ComputedColumn("ParamKind", paramKindDoc, 0), model.AgeColumn())
	k.Resource.Subresources = []model.Subresource{{Name: "status", Kind: "ValidatingAdmissionPolicy", Verbs: []string{model.VerbGet, model.VerbPatch, model.VerbUpdate},
		GoType: reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicy]()}}
	return k
}

// MutatingAdmissionPolicyKind describes MutatingAdmissionPolicies.
func MutatingAdmissionPolicyKind() kinds.Kind {
	return kind[admissionregistrationv1.MutatingAdmissionPolicy, admissionregistrationv1.MutatingAdmissionPolicyList](
		"mutatingadmissionpolicies", "mutatingadmissionpolicy", "MutatingAdmissionPolicy",
		mutatingPolicyRules{compilers: newCELCompilers()},
		&kinds.Table{
			Columns: []metav1.TableColumnDefinition{printers.NameColumn(), count("Mutations", mutationsDoc), printers.Column("ParamKind", paramKindDoc), printers.AgeColumn()},
			Cells: printers.Typed(func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
				return []any{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), printers.Age(p.CreationTimestamp, now)}
			}),
		},
		model.NameColumn(), integerColumn("Mutations", mutationsDoc), model.ComputedColumn("ParamKind", paramKindDoc, 0), model.AgeColumn())
}

func bindingTable() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("PolicyName", policyNameDoc), printers.Column("ParamRef", paramRefDoc), printers.AgeColumn()}
}

func bindingColumns() []model.PrinterColumn {
	return []model.PrinterColumn{model.NameColumn(), model.ComputedColumn("PolicyName", policyNameDoc, 0), model.ComputedColumn("ParamRef", paramRefDoc, 0), model.AgeColumn()}
}

// ValidatingAdmissionPolicyBindingKind describes ValidatingAdmissionPolicyBindings.
func ValidatingAdmissionPolicyBindingKind() kinds.Kind {
	return kind[admissionregistrationv1.ValidatingAdmissionPolicyBinding, admissionregistrationv1.ValidatingAdmissionPolicyBindingList](
		"validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding",
		validatingBindingRules(),
		&kinds.Table{Columns: bindingTable(), Cells: printers.Typed(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
			return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), printers.Age(b.CreationTimestamp, now)}
		})},
		bindingColumns()...)
}

// MutatingAdmissionPolicyBindingKind describes MutatingAdmissionPolicyBindings.
func MutatingAdmissionPolicyBindingKind() kinds.Kind {
	return kind[admissionregistrationv1.MutatingAdmissionPolicyBinding, admissionregistrationv1.MutatingAdmissionPolicyBindingList](
		"mutatingadmissionpolicybindings", "mutatingadmissionpolicybinding", "MutatingAdmissionPolicyBinding",
		mutatingBindingRules(),
		&kinds.Table{Columns: bindingTable(), Cells: printers.Typed(func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
			return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), printers.Age(b.CreationTimestamp, now)}
		})},
		bindingColumns()...)
}

// paramKindCell is apiVersion/kind, or <unset>.
func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// paramRefCell is namespace/name (*/name without a namespace: the printer cannot tell whether the
// param is cluster-scoped), the selector, or <unset>.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}
