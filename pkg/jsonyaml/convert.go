// Package jsonyaml writes JSON as YAML in the bytes sigs.k8s.io/yaml's JSONToYAML writes, faster:
// Convert for any JSON, and AppendItem for one item of a YAML list, written straight from its JSON.
package jsonyaml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"

	goyaml "go.yaml.in/yaml/v2"
)

// Convert is sigs.k8s.io/yaml's JSONToYAML, byte for byte (FuzzJSONToYAML), at about twice its
// speed: JSONToYAML reads the JSON with the YAML parser, to get the number types YAML would pick,
// and that parse is half its time; here encoding/json reads it, and numbers get the types the YAML
// parser would give them (yamlNumber). A YAML LIST converts with it only the items AppendItem
// declines (BenchmarkJSONToYAML, BenchmarkAppendItem).
func Convert(j []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("converting JSON to YAML: data after the value")
	}
	v, err := yamlNumbers(v)
	if err != nil {
		return nil, err
	}
	return goyaml.Marshal(v)
}

// yamlNumbers replaces, in place, each json.Number in v by the value the YAML parser resolves the
// same plain scalar to.
func yamlNumbers(v any) (any, error) {
	var err error
	switch t := v.(type) {
	case json.Number:
		return yamlNumber(string(t))
	case map[string]any:
		for k, e := range t {
			if t[k], err = yamlNumbers(e); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range t {
			if t[i], err = yamlNumbers(e); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// yamlFloat is go.yaml.in/yaml/v2's pattern of a plain scalar that resolves to a float (resolve.go).
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yamlNumber resolves a JSON number as go.yaml.in/yaml/v2 resolves a plain scalar (resolve.go): an
// int when it fits, else an int64, else a uint64, else a float64.
func yamlNumber(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		if i == int64(int(i)) {
			return int(i), nil
		}
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u, nil
	}
	if yamlFloat.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	}
	// What the YAML parser would keep as a string: no JSON number gets here.
	return s, nil
}
