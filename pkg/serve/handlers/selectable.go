package handlers

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/jsonpath"

	"github.com/apictl/apictl/pkg/storage"
)

// selectableField is one of a CRD's selectableFields, parsed once per scope as kube's custom resource
// strategy parses it.
type selectableField struct {
	name string
	path *jsonpath.JSONPath
}

// newSelectableFields parses a custom resource's selectable fields; a path that does not parse (kube's
// CRD validation refuses those) is left out.
func newSelectableFields(names []string) []selectableField {
	var out []selectableField
	for _, name := range names {
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		if err := p.Parse("{." + name + "}"); err != nil {
			continue
		}
		out = append(out, selectableField{name: name, path: p})
	}
	return out
}

// customFieldSet is a custom resource's field set: metadata.name, metadata.namespace and the values of
// its selectable fields, printed as kube prints them ("" when missing).
func customFieldSet(obj map[string]any, namespaced bool, sel []selectableField) (fields.Set, error) {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	set := fields.Set{"metadata.name": name}
	if namespaced {
		ns, _ := meta["namespace"].(string)
		set["metadata.namespace"] = ns
	}
	for _, f := range sel {
		results, err := f.path.FindResults(obj)
		if err != nil {
			return nil, fmt.Errorf("finding %s: %w", f.name, err)
		}
		set[f.name] = ""
		if len(results) > 0 && len(results[0]) > 0 {
			if v := results[0][0].Interface(); v != nil {
				set[f.name] = fmt.Sprint(v)
			}
		}
	}
	return set, nil
}

// customFilter selects custom resources by labels and fields, decoding each object whole: only
// selectors on declared selectable fields come here, the others take the cheaper filter.
func customFilter(namespaced bool, sel []selectableField, l labels.Selector, f fields.Selector) storage.Filter {
	return func(kv storage.KeyValue) (bool, error) {
		var obj map[string]any
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			return false, fmt.Errorf("reading %s: %w", kv.Key, err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		lbls := labels.Set{}
		if m, ok := meta["labels"].(map[string]any); ok {
			for k, v := range m {
				lbls[k], _ = v.(string)
			}
		}
		if !l.Matches(lbls) {
			return false, nil
		}
		set, err := customFieldSet(obj, namespaced, sel)
		if err != nil {
			return false, err
		}
		return f.Matches(set), nil
	}
}

// selectsCustomFields reports whether f names a field beyond metadata.
func selectsCustomFields(f fields.Selector) bool {
	for _, r := range f.Requirements() {
		if !strings.HasPrefix(r.Field, "metadata.") {
			return true
		}
	}
	return false
}
