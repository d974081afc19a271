package routes

// WithoutCustom returns the API without the resources CRDs declare: the built-in part of a server's
// API, to which its CRD controller adds the CRDs stored in the cluster while it runs.
func (a *API) WithoutCustom() *API {
	var groups []Group
	for _, g := range a.groups {
		out := Group{Name: g.Name}
		for _, v := range g.Versions {
			var res []Resource
			for _, r := range v.Resources {
				if !r.Custom {
					res = append(res, r)
				}
			}
			if len(res) > 0 {
				out.Versions = append(out.Versions, Version{Name: v.Name, Resources: res})
			}
		}
		if len(out.Versions) > 0 {
			groups = append(groups, out)
		}
	}
	return newAPI(groups)
}

// Taken returns the resource names (plural, singular, short names) and kinds (kind, list kind) that
// the API's resources of group hold, for the CRD controller's name conflicts.
func (a *API) Taken(group string) (resources, kinds []string) {
	g, ok := a.Group(group)
	if !ok {
		return nil, nil
	}
	for _, v := range g.Versions {
		for _, r := range v.Resources {
			resources = append(resources, r.Plural, r.Singular)
			resources = append(resources, r.ShortNames...)
			kinds = append(kinds, r.Kind, r.ListKind)
		}
	}
	return resources, kinds
}

// Empty returns an API with no groups, to which WithCRDs adds one CRD's group alone.
func Empty() *API { return newAPI(nil) }
