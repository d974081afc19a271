package routes

import (
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Groups of the extension points: admission configuration and API registration.
const (
	GroupAdmissionRegistration = "admissionregistration.k8s.io"
	GroupAPIRegistration       = "apiregistration.k8s.io"
)

// apiExtensions is the category kube puts every resource of these two groups in (kubectl get
// api-extensions), beside CustomResourceDefinitions. A new slice each time: APIs share nothing.
func apiExtensions() []string { return []string{"api-extensions"} }

// admissionregistrationV1 are the webhook configurations and the admission policies with their
// bindings, all cluster-scoped, with the columns of kube's printers. Of them only
// ValidatingAdmissionPolicy has a status subresource in kube 1.37 (type checking results);
// MutatingAdmissionPolicy has none.
func admissionregistrationV1() []Resource {
	webhooksDoc := "Webhooks indicates the number of webhooks registered in this configuration"
	paramKindDoc := "ParamKind specifies the kind of resources used to parameterize this policy"
	policyNameDoc := "PolicyName indicates the policy definition which the policy binding binded to"
	paramRefDoc := "ParamRef indicates the param resource which sets the configuration param"
	ar := func(plural, singular, kind string, obj, list reflect.Type, columns ...PrinterColumn) Resource {
		r := builtin(GroupAdmissionRegistration, "v1", plural, singular, kind, false, StandardVerbs(), nil, obj, list, columns...)
		r.Categories = apiExtensions()
		return r
	}
	vap := ar("validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy",
		reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicy](), reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicyList](),
		nameColumn(), integerColumn("Validations", "Validations indicates the number of validation rules defined in this configuration"),
		computedColumn("ParamKind", paramKindDoc, 0), ageColumn())
	vap.Subresources = []Subresource{{Name: "status", Kind: "ValidatingAdmissionPolicy", Verbs: []string{VerbGet, VerbPatch, VerbUpdate},
		GoType: reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicy]()}}
	return []Resource{
		ar("mutatingadmissionpolicies", "mutatingadmissionpolicy", "MutatingAdmissionPolicy",
			reflect.TypeFor[admissionregistrationv1.MutatingAdmissionPolicy](), reflect.TypeFor[admissionregistrationv1.MutatingAdmissionPolicyList](),
			nameColumn(), integerColumn("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
			computedColumn("ParamKind", paramKindDoc, 0), ageColumn()),
		ar("mutatingadmissionpolicybindings", "mutatingadmissionpolicybinding", "MutatingAdmissionPolicyBinding",
			reflect.TypeFor[admissionregistrationv1.MutatingAdmissionPolicyBinding](), reflect.TypeFor[admissionregistrationv1.MutatingAdmissionPolicyBindingList](),
			nameColumn(), computedColumn("PolicyName", policyNameDoc, 0), computedColumn("ParamRef", paramRefDoc, 0), ageColumn()),
		ar("mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration",
			reflect.TypeFor[admissionregistrationv1.MutatingWebhookConfiguration](), reflect.TypeFor[admissionregistrationv1.MutatingWebhookConfigurationList](),
			nameColumn(), integerColumn("Webhooks", webhooksDoc), ageColumn()),
		vap,
		ar("validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding",
			reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicyBinding](), reflect.TypeFor[admissionregistrationv1.ValidatingAdmissionPolicyBindingList](),
			nameColumn(), computedColumn("PolicyName", policyNameDoc, 0), computedColumn("ParamRef", paramRefDoc, 0), ageColumn()),
		ar("validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration",
			reflect.TypeFor[admissionregistrationv1.ValidatingWebhookConfiguration](), reflect.TypeFor[admissionregistrationv1.ValidatingWebhookConfigurationList](),
			nameColumn(), integerColumn("Webhooks", webhooksDoc), ageColumn()),
	}
}

// integerColumn is a computed column of kube's printers that holds a count.
func integerColumn(name, description string) PrinterColumn {
	return PrinterColumn{Name: name, Type: "integer", Description: description}
}
