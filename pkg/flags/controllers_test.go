package flags

import (
	"strings"
	"testing"
)

func TestControllerOptions(t *testing.T) {
	for _, tc := range []struct {
		selectors []string
		enabled   map[string]bool
		errs      []string
	}{
		{[]string{"*"}, map[string]bool{"garbage-collector-controller": true, "namespace-controller": true}, nil},
		{[]string{"*", "-garbage-collector-controller"}, map[string]bool{"garbage-collector-controller": false, "namespace-controller": true}, nil},
		{[]string{"-garbage-collector-controller", "*"}, map[string]bool{"garbage-collector-controller": false}, nil},
		{[]string{"namespace-controller"}, map[string]bool{"namespace-controller": true, "garbage-collector-controller": false}, nil},
		{[]string{}, map[string]bool{"namespace-controller": false}, nil},
		{[]string{"*", "garbagecollector", "-nope"}, nil, []string{"garbagecollector is not", "-nope is not"}},
	} {
		o := &ControllerOptions{Controllers: tc.selectors}
		if err := o.Complete(); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		if len(errs) != len(tc.errs) {
			t.Errorf("%v: %d errors (%v), want %d", tc.selectors, len(errs), errs, len(tc.errs))
			continue
		}
		for i, want := range tc.errs {
			if msg := errs[i].Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "namespace-controller") {
				t.Errorf("%v: error %q should name %s and list the controllers", tc.selectors, msg, want)
			}
		}
		for name, want := range tc.enabled {
			if got := o.Enabled(name); got != want {
				t.Errorf("%v: Enabled(%s) = %v, want %v", tc.selectors, name, got, want)
			}
		}
	}
}
