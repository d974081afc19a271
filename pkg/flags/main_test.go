package flags

import (
	"os"
	"strings"
	"testing"
)

// TestMain drops APICTL_* variables from the environment, so that a developer's shell or a CI job
// cannot change what the tests see. Tests set the ones they need with t.Setenv.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, EnvPrefix+"_") {
			os.Unsetenv(name)
		}
	}
	os.Exit(m.Run())
}
