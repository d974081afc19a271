package builtin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apictl/apictl/internal/golden"
)

// upstreamLine is how a ported file names what it follows: "Ported from k8s.io/kubernetes vX.Y.Z".
var upstreamLine = regexp.MustCompile(`Ported from k8s\.io/kubernetes (v\d+\.\d+\.\d+)`)

// TestUpstreamVersions lists every k8s.io/kubernetes file apictl's code follows, with the release it
// was read at: the kinds' descriptors (kinds.Kind.Upstream) and each product file that says "Ported
// from k8s.io/kubernetes vX.Y.Z". A kube bump starts from testdata/upstream.txt: each line below the
// new release is a port to read again.
func TestUpstreamVersions(t *testing.T) {
	var lines []string
	for _, k := range Kinds() {
		if len(k.Upstream) == 0 && k.Strategy != nil {
			t.Errorf("kind %s has rules of its own but names no upstream file they follow", k.Resource.Kind)
		}
		for _, u := range k.Upstream {
			if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(u.Version) || u.Path == "" {
				t.Errorf("kind %s: upstream %+v needs a path and a version vX.Y.Z", k.Resource.Kind, u)
			}
			lines = append(lines, fmt.Sprintf("%s\t%s\tkind %s: %s", u.Version, u.Path, k.Resource.Kind, u.Parts))
		}
	}
	root := filepath.Join("..", "..", "..")
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range upstreamLine.FindAllStringSubmatch(string(data), -1) {
			lines = append(lines, fmt.Sprintf("%s\t%s\tported", m[1], filepath.ToSlash(rel)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	golden.Check(t, "upstream.txt", strings.Join(slices.Compact(lines), "\n")+"\n")
}
