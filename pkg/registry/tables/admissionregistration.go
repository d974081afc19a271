package tables

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apictl/apictl/pkg/kinds/printers"
)

// admissionRegistrationPrinter returns kube's printer for an admissionregistration.k8s.io kind
// (pkg/printers/internalversion): webhook configurations count their webhooks, policies their
// validations or mutations and name their paramKind, bindings name their policy and param.
func admissionRegistrationPrinter(kind string) (printer, bool) {
	const (
		webhooks  = "Webhooks indicates the number of webhooks registered in this configuration"
		paramKind = "ParamKind specifies the kind of resources used to parameterize this policy"
		policy    = "PolicyName indicates the policy definition which the policy binding binded to"
		paramRef  = "ParamRef indicates the param resource which sets the configuration param"
	)
	count := func(name, description string) metav1.TableColumnDefinition {
		return metav1.TableColumnDefinition{Name: name, Type: "integer", Description: description}
	}
	binding := []metav1.TableColumnDefinition{printers.NameColumn(), printers.Column("PolicyName", policy), printers.Column("ParamRef", paramRef), printers.AgeColumn()}
	switch kind {
	case "ValidatingWebhookConfiguration":
		return printer{columns: []metav1.TableColumnDefinition{printers.NameColumn(), count("Webhooks", webhooks), printers.AgeColumn()},
			cells: typed(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []any {
				return []any{c.Name, int64(len(c.Webhooks)), printers.Age(c.CreationTimestamp, now)}
			})}, true
	case "MutatingWebhookConfiguration":
		return printer{columns: []metav1.TableColumnDefinition{printers.NameColumn(), count("Webhooks", webhooks), printers.AgeColumn()},
			cells: typed(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []any {
				return []any{c.Name, int64(len(c.Webhooks)), printers.Age(c.CreationTimestamp, now)}
			})}, true
	case "ValidatingAdmissionPolicy":
		return printer{columns: []metav1.TableColumnDefinition{printers.NameColumn(),
			count("Validations", "Validations indicates the number of validation rules defined in this configuration"),
			printers.Column("ParamKind", paramKind), printers.AgeColumn()},
			cells: typed(func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []any {
				return []any{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), printers.Age(p.CreationTimestamp, now)}
			})}, true
	case "MutatingAdmissionPolicy":
		return printer{columns: []metav1.TableColumnDefinition{printers.NameColumn(),
			count("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
			printers.Column("ParamKind", paramKind), printers.AgeColumn()},
			cells: typed(func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []any {
				return []any{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), printers.Age(p.CreationTimestamp, now)}
			})}, true
	case "ValidatingAdmissionPolicyBinding":
		return printer{columns: binding, cells: typed(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []any {
			return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), printers.Age(b.CreationTimestamp, now)}
		})}, true
	case "MutatingAdmissionPolicyBinding":
		return printer{columns: binding, cells: typed(func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []any {
			return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), printers.Age(b.CreationTimestamp, now)}
		})}, true
	}
	return printer{}, false
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
