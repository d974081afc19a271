package crdnames

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func crd(name, group string, names apiextensionsv1.CustomResourceDefinitionNames, accepted *apiextensionsv1.CustomResourceDefinitionNames) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Names: names}}
	if accepted != nil {
		c.Status.AcceptedNames = *accepted
	}
	return c
}

func widgets(plural, kind string, short ...string) apiextensionsv1.CustomResourceDefinitionNames {
	return apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List", ShortNames: short}
}

func TestCompute(t *testing.T) {
	existing := widgets("widgets", "Widget", "wd")
	tests := []struct {
		name                string
		crd                 *apiextensionsv1.CustomResourceDefinition
		others              []*apiextensionsv1.CustomResourceDefinition
		builtin             Taken
		wantStatus          apiextensionsv1.ConditionStatus
		wantReason, wantMsg string
		wantEstablished     apiextensionsv1.ConditionStatus
		wantEstablishReason string
		wantAcceptedPlural  string
	}{
		{name: "fresh names", crd: crd("gadgets.example.com", "example.com", widgets("gadgets", "Gadget"), nil),
			wantStatus: "True", wantReason: "NoConflicts", wantMsg: "no conflicts found",
			wantEstablished: "True", wantEstablishReason: "InitialNamesAccepted", wantAcceptedPlural: "gadgets"},
		{name: "plural taken by another CRD", crd: crd("widgets.example.com", "example.com", widgets("widgets", "Thing"), nil),
			others: []*apiextensionsv1.CustomResourceDefinition{crd("old.example.com", "example.com", existing, &existing)},
			// kube reports the last conflict it finds: the singular after the plural.
			wantStatus: "False", wantReason: "SingularConflict", wantMsg: `"widget" is already in use`,
			wantEstablished: "False", wantEstablishReason: "NotAccepted"},
		{name: "kind taken", crd: crd("things.example.com", "example.com", widgets("things", "Widget"), nil),
			others:     []*apiextensionsv1.CustomResourceDefinition{crd("old.example.com", "example.com", existing, &existing)},
			wantStatus: "False", wantReason: "ListKindConflict", wantMsg: `"WidgetList" is already in use`,
			wantEstablished: "False", wantEstablishReason: "NotAccepted", wantAcceptedPlural: "things"},
		{name: "short name taken", crd: crd("things.example.com", "example.com", widgets("things", "Thing", "wd"), nil),
			others:     []*apiextensionsv1.CustomResourceDefinition{crd("old.example.com", "example.com", existing, &existing)},
			wantStatus: "False", wantReason: "ShortNamesConflict", wantMsg: `"wd" is already in use`,
			wantEstablished: "False", wantEstablishReason: "NotAccepted", wantAcceptedPlural: "things"},
		{name: "other group does not conflict", crd: crd("widgets.other.com", "other.com", existing, nil),
			others:     []*apiextensionsv1.CustomResourceDefinition{crd("old.example.com", "example.com", existing, &existing)},
			wantStatus: "True", wantReason: "NoConflicts", wantMsg: "no conflicts found",
			wantEstablished: "True", wantEstablishReason: "InitialNamesAccepted", wantAcceptedPlural: "widgets"},
		{name: "built-in resource", crd: crd("roles.rbac.authorization.k8s.io", "rbac.authorization.k8s.io", widgets("roles", "MyRole"), nil),
			builtin:    Taken{Resources: sets.New("roles", "role"), Kinds: sets.New("Role", "RoleList")},
			wantStatus: "False", wantReason: "SingularConflict", wantMsg: `"role" is already in use`,
			wantEstablished: "False", wantEstablishReason: "NotAccepted"},
		{name: "own accepted names stay", crd: crd("widgets.example.com", "example.com", existing, &existing),
			others:     []*apiextensionsv1.CustomResourceDefinition{crd("widgets.example.com", "example.com", existing, &existing)},
			wantStatus: "True", wantReason: "NoConflicts", wantMsg: "no conflicts found",
			wantEstablished: "True", wantEstablishReason: "InitialNamesAccepted", wantAcceptedPlural: "widgets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := append([]*apiextensionsv1.CustomResourceDefinition{tt.crd}, tt.others...)
			st := Compute(tt.crd, Claimed(all, tt.crd.Spec.Group, tt.crd.Name, tt.builtin))
			if st.NamesAccepted.Status != tt.wantStatus || st.NamesAccepted.Reason != tt.wantReason || st.NamesAccepted.Message != tt.wantMsg {
				t.Errorf("NamesAccepted = %s/%s/%q, want %s/%s/%q", st.NamesAccepted.Status, st.NamesAccepted.Reason, st.NamesAccepted.Message, tt.wantStatus, tt.wantReason, tt.wantMsg)
			}
			if st.Established.Status != tt.wantEstablished || st.Established.Reason != tt.wantEstablishReason {
				t.Errorf("Established = %s/%s, want %s/%s", st.Established.Status, st.Established.Reason, tt.wantEstablished, tt.wantEstablishReason)
			}
			if st.AcceptedNames.Plural != tt.wantAcceptedPlural {
				t.Errorf("accepted plural = %q, want %q", st.AcceptedNames.Plural, tt.wantAcceptedPlural)
			}
			c := tt.crd.DeepCopy()
			if !Apply(c, st) {
				t.Error("Apply reported no change on a CRD without status")
			}
			if Apply(c, st) {
				t.Error("Apply reported a change when applying the same status again")
			}
		})
	}
}
