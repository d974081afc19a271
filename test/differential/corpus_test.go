package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Step is one request of the corpus. Steps run in order, file by file (testdata/corpus/*.yaml in
// name order), against one server; later steps see the values earlier steps captured.
type Step struct {
	// ID names the step inside its file; the allowlist and the goldens use "<file>/<id>".
	ID string `json:"id"`
	// Doc says what the step checks, for people.
	Doc string `json:"doc,omitempty"`
	// Method and Path (with the query) of the request. Path, header values and bodies may use
	// ${name} for a value an earlier step captured.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Headers are sent besides the defaults (Accept: application/json and, with a body,
	// Content-Type: application/json); a header set here replaces its default.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent as JSON; RawBody is sent byte for byte (bad JSON, YAML for apply).
	Body    json.RawMessage `json:"body,omitempty"`
	RawBody *string         `json:"rawBody,omitempty"`
	// Watch reads the response as a watch stream: up to Events events (0: until the server ends
	// it, so the path needs timeoutSeconds).
	Watch *WatchSpec `json:"watch,omitempty"`
	// Capture stores values of the raw response body, by dotted path (metadata.resourceVersion,
	// items.0.metadata.name), under names later steps use as ${name}.
	Capture map[string]string `json:"capture,omitempty"`
	// Ignore lists JSON paths (/gitCommit, /items/*/metadata/name) whose values differ between
	// any two servers and are replaced by "<ignored>" before comparing.
	Ignore []string `json:"ignore,omitempty"`
}

// WatchSpec bounds a watch.
type WatchSpec struct {
	Events int `json:"events,omitempty"`
}

// corpusFile is one file of steps.
type corpusFile struct {
	Name  string // base name without .yaml
	Steps []Step
}

func loadCorpus(dir string) ([]corpusFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var files []corpusFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var steps []Step
		if err := yaml.UnmarshalStrict(data, &steps); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		seen := map[string]bool{}
		for i, s := range steps {
			switch {
			case s.ID == "":
				return nil, fmt.Errorf("%s: step %d has no id", p, i)
			case seen[s.ID]:
				return nil, fmt.Errorf("%s: step id %q is used twice", p, s.ID)
			case s.Method == "" || !strings.HasPrefix(s.Path, "/"):
				return nil, fmt.Errorf("%s: step %q needs a method and a path starting with /", p, s.ID)
			case s.Body != nil && s.RawBody != nil:
				return nil, fmt.Errorf("%s: step %q has both body and rawBody", p, s.ID)
			}
			seen[s.ID] = true
		}
		files = append(files, corpusFile{Name: name, Steps: steps})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus files in %s", dir)
	}
	return files, nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z0-9_.-]+)\}`)

// expand replaces ${name} with captured values; an unknown name is an error, so a typo in the
// corpus is caught when recording.
func expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return out, fmt.Errorf("no captured value named %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// lookup follows a dotted path through decoded JSON and returns a scalar as a string.
func lookup(v any, path string) (string, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func TestExpandAndLookup(t *testing.T) {
	vars := map[string]string{"rv": "42", "c": "abc=="}
	got, err := expand("/x?resourceVersion=${rv}&continue=${c}", vars)
	if err != nil || got != "/x?resourceVersion=42&continue=abc==" {
		t.Errorf("expand = %q, %v", got, err)
	}
	if _, err := expand("${nope}", vars); err == nil {
		t.Error("expand of an unknown name: no error")
	}
	var v any
	if err := json.Unmarshal([]byte(`{"metadata":{"resourceVersion":"7"},"items":[{"n":true}]}`), &v); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"metadata.resourceVersion": "7", "items.0.n": "true"} {
		if got, ok := lookup(v, path); !ok || got != want {
			t.Errorf("lookup(%s) = %q, %v; want %q", path, got, ok, want)
		}
	}
	if _, ok := lookup(v, "items.3.n"); ok {
		t.Error("lookup past the end of a list succeeded")
	}
}
