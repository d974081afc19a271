package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
)

// TestCompletionsCurrent keeps completions/ in step with the command tree: release archives ship
// those files, so a stale one would complete flags that no longer exist.
func TestCompletionsCurrent(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "completions"))
	if err != nil {
		t.Fatal(err)
	}
	for shell, file := range map[string]string{
		"bash":       "apictl.bash",
		"zsh":        "apictl.zsh",
		"fish":       "apictl.fish",
		"powershell": "apictl.ps1",
	} {
		t.Run(shell, func(t *testing.T) {
			code, out, stderr := run(t, false, "completion", shell)
			if code != ExitOK || out == "" {
				t.Fatalf("apictl completion %s: exit %d: %s", shell, code, stderr)
			}
			path := filepath.Join(dir, file)
			if *golden.Update {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil || string(want) != out {
				t.Errorf("completions/%s is stale or missing; regenerate with: go test ./cmd/apictl/app -run TestCompletionsCurrent -update", file)
			}
		})
	}
}

func TestFlagValuesComplete(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"__complete", "serve", "--authorization-mode", ""}, want: "AlwaysAllow\nAlwaysDeny\nABAC\nRBAC\n"},
		{args: []string{"__complete", "flags", "list", "-o", ""}, want: "table\njson\nyaml\nmarkdown\n"},
		{args: []string{"__complete", "serve", "--log-format", ""}, want: "text\njson\n"},
	}
	for _, tt := range tests {
		code, out, _ := run(t, false, tt.args...)
		if code != ExitOK || !strings.HasPrefix(out, tt.want) {
			t.Errorf("%v: exit %d, completions %q, want prefix %q", tt.args, code, out, tt.want)
		}
	}
}
