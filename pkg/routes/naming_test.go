package routes

import "testing"

// TestOperationIDsAgree: the installer's fast operation IDs are what kube's rule gives for every
// route of a table with every kind of action.
func TestOperationIDsAgree(t *testing.T) {
	for _, api := range []*API{testAPI(t), appsAPI(t)} {
		for _, r := range Install(api, InstallOptions{Profiling: true}).Routes {
			if r.Operation == "" {
				continue
			}
			id, tag := openAPIOperation(r.Operation, r.Path)
			if id != r.OperationID || tag != r.Tag {
				t.Errorf("%s %s: installer says %s %s, kube's rule %s %s", r.Method, r.Path, r.OperationID, r.Tag, id, tag)
			}
		}
	}
}

func TestTitle(t *testing.T) {
	for in, want := range map[string]string{"": "", "status": "Status", "ephemeralcontainers": "Ephemeralcontainers", "foo-bar": "Foo-Bar", "a1b": "A1b"} {
		if got := title(in); got != want {
			t.Errorf("title(%q) = %q, want %q", in, got, want)
		}
	}
}
