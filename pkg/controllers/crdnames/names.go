// Package crdnames decides which names of a CustomResourceDefinition are accepted and the conditions
// that follow, as kube's naming and establishing controllers do: a name is accepted when it already
// is, or when no other CRD of the group has accepted it. The package is pure: the CRD controller
// (pkg/apiserver) feeds it the stored CRDs and writes what it returns.
package crdnames

import (
	"fmt"
	"slices"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Taken are the names already accepted in one group: resource names (plural, singular, short
// names) and kinds (kind, list kind).
type Taken struct {
	Resources, Kinds sets.Set[string]
}

// Claimed returns the names the CRDs of group have accepted, other than exclude's, plus builtin's
// (the resources and kinds the server serves itself in that group).
func Claimed(crds []*apiextensionsv1.CustomResourceDefinition, group, exclude string, builtin Taken) Taken {
	t := Taken{Resources: sets.New[string](), Kinds: sets.New[string]()}
	if builtin.Resources != nil {
		t.Resources = t.Resources.Union(builtin.Resources)
	}
	if builtin.Kinds != nil {
		t.Kinds = t.Kinds.Union(builtin.Kinds)
	}
	for _, c := range crds {
		if c.Spec.Group != group || c.Name == exclude {
			continue
		}
		n := c.Status.AcceptedNames
		t.Resources.Insert(n.Plural, n.Singular)
		t.Resources.Insert(n.ShortNames...)
		t.Kinds.Insert(n.Kind, n.ListKind)
	}
	t.Resources.Delete("")
	t.Kinds.Delete("")
	return t
}

// Status is what the naming and establishing controllers set.
type Status struct {
	AcceptedNames apiextensionsv1.CustomResourceDefinitionNames
	NamesAccepted apiextensionsv1.CustomResourceDefinitionCondition
	Established   apiextensionsv1.CustomResourceDefinitionCondition
}

// Compute returns crd's accepted names and conditions given the names others hold, with kube's
// reasons and messages. Where kube's naming controller sets Established to Installing and its
// establishing controller then to True, Compute goes to True at once: the caller installs the
// resource's handlers before it stores the status, so a client that sees Established is served.
func Compute(crd *apiextensionsv1.CustomResourceDefinition, taken Taken) Status {
	requested, accepted := crd.Spec.Names, crd.Status.AcceptedNames
	names := accepted
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	if err := fresh(requested.Plural, accepted.Plural, taken.Resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := fresh(requested.Singular, accepted.Singular, taken.Resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !slices.Equal(requested.ShortNames, accepted.ShortNames) {
		var errs []error
		for _, s := range requested.ShortNames {
			if slices.Contains(accepted.ShortNames, s) {
				continue
			}
			if err := fresh(s, "", taken.Resources); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	if err := fresh(requested.Kind, accepted.Kind, taken.Kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := fresh(requested.ListKind, accepted.ListKind, taken.Kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = requested.Categories
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}

	established := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
		Status: apiextensionsv1.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted"}
	if old := apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && cond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}
	}
	return Status{AcceptedNames: names, NamesAccepted: cond, Established: established}
}

// Apply sets st on crd and reports whether anything changed. Conditions keep their
// lastTransitionTime unless their status changes, as kube's SetCRDCondition does.
func Apply(crd *apiextensionsv1.CustomResourceDefinition, st Status) bool {
	changed := !NamesEqual(crd.Status.AcceptedNames, st.AcceptedNames)
	crd.Status.AcceptedNames = st.AcceptedNames
	changed = SetCondition(crd, st.NamesAccepted) || changed
	return SetCondition(crd, st.Established) || changed
}

// SetCondition sets c on crd unless an equivalent condition is there, keeping its time, and reports
// whether it changed anything.
func SetCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) bool {
	if old := apiextensionshelpers.FindCRDCondition(crd, c.Type); old != nil && apiextensionshelpers.IsCRDConditionEquivalent(old, &c) {
		return false
	}
	apiextensionshelpers.SetCRDCondition(crd, c)
	return true
}

// NamesEqual reports whether two sets of names are the same.
func NamesEqual(a, b apiextensionsv1.CustomResourceDefinitionNames) bool {
	return a.Plural == b.Plural && a.Singular == b.Singular && a.Kind == b.Kind && a.ListKind == b.ListKind &&
		slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}

// fresh is kube's equalToAcceptedOrFresh: a name is fine when it is already the accepted one or no
// one else holds it.
func fresh(requested, accepted string, used sets.Set[string]) error {
	if requested == accepted || !used.Has(requested) {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}
