package routes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// CRD is a CustomResourceDefinition read from a manifest, with where it came from so that later
// problems (collisions) can name the file and document.
type CRD struct {
	// File is the path as given; Document counts the non-empty YAML documents of the file from 1;
	// Line is the line the document starts on; Item is the index in a List, or -1.
	File     string
	Document int
	Line     int
	Item     int
	// Definition is the decoded, validated and defaulted CRD.
	Definition *apiextensionsv1.CustomResourceDefinition
}

// CRDError is a problem with a CRD manifest: `crds/widgets.yaml: document 2 (line 14):
// spec.names.kind: Required value`. Document 0 means the file as a whole.
type CRDError struct {
	File     string
	Document int
	Line     int
	Item     int
	// Group is the spec.group of the CRD when it could be read, so that --runtime-config entries for
	// that group are not reported a second time as unknown.
	Group string
	Err   error
}

func (e *CRDError) Error() string { return e.File + ": " + e.Detail() }

// Detail is the message without the file name: where in the file, and what is wrong.
func (e *CRDError) Detail() string {
	return e.Where() + e.Err.Error()
}

// Where is "document 2 (line 14): ", "document 1 (line 1) item 3: " or "" for the whole file.
func (e *CRDError) Where() string {
	if e.Document == 0 {
		return ""
	}
	s := "document " + strconv.Itoa(e.Document) + " (line " + strconv.Itoa(e.Line) + ")"
	if e.Item >= 0 {
		s += " item " + strconv.Itoa(e.Item)
	}
	return s + ": "
}

func (e *CRDError) Unwrap() error { return e.Err }

// errorf reports a problem found with c after it was parsed.
func (c *CRD) errorf(format string, args ...any) *CRDError {
	return &CRDError{File: c.File, Document: c.Document, Line: c.Line, Item: c.Item, Group: c.Definition.Spec.Group, Err: fmt.Errorf(format, args...)}
}

// source says where c came from: "crds/a.yaml document 1 (line 1)".
func (c *CRD) source() string {
	return c.File + " " + strings.TrimSuffix((&CRDError{Document: c.Document, Line: c.Line, Item: c.Item}).Where(), ": ")
}

// document is one YAML document of a manifest.
type document struct {
	data  []byte
	line  int
	index int
}

// splitDocuments splits a manifest on "---" lines (a line starting with --- followed by nothing but
// blanks or a comment), dropping documents that hold only blanks and comments. Documents are
// numbered from 1 in the order they appear; line numbers count from 1.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur bytes.Buffer
	start, line, empty := 1, 0, true
	flush := func() {
		if !empty {
			docs = append(docs, document{data: bytes.Clone(cur.Bytes()), line: start, index: len(docs) + 1})
		}
		cur.Reset()
		empty = true
	}
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i+1], data[i+1:]
		} else {
			l, data = data, nil
		}
		if rest, ok := bytes.CutPrefix(l, []byte("---")); ok {
			rest = bytes.TrimSpace(rest)
			if len(rest) == 0 || rest[0] == '#' {
				flush()
				start = line + 1
				continue
			}
		}
		if t := bytes.TrimSpace(l); empty && (len(t) == 0 || t[0] == '#') {
			// Leading blank and comment lines do not start the document; dropping them keeps the
			// parser's line numbers relative to the document's first line.
			start = line + 1
			continue
		}
		empty = false
		cur.Write(l)
	}
	flush()
	return docs
}

// ParseCRDs decodes the CustomResourceDefinitions in a manifest: YAML or JSON, several documents
// separated by --- lines, or a v1 List of them (as kubectl get -o yaml prints). Empty documents are
// skipped; anything but an apiextensions.k8s.io/v1 CustomResourceDefinition is an error, as are
// unknown fields and invalid names, scope, versions, subresources and printer columns. Every CRD
// is defaulted as kube defaults it (singular and listKind from kind). It returns the valid CRDs and
// one *CRDError for each problem found, joined with errors.Join. file only labels messages.
func ParseCRDs(file string, data []byte) ([]CRD, error) {
	var crds []CRD
	var errs []error
	for _, doc := range splitDocuments(data) {
		fail := func(item int, group string, err error) {
			errs = append(errs, &CRDError{File: file, Document: doc.index, Line: doc.line, Item: item, Group: group, Err: err})
		}
		js, err := yaml.YAMLToJSONStrict(doc.data)
		if err != nil {
			fail(-1, "", errors.New(absoluteYAMLLine(err.Error(), doc.line)))
			continue
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(js, &head); err != nil {
			fail(-1, "", fmt.Errorf("is not a Kubernetes object: %w", err))
			continue
		}
		if head.APIVersion == "v1" && head.Kind == "List" {
			for i, item := range head.Items {
				crd, group, errs := decodeCRD(item)
				for _, err := range errs {
					fail(i, group, err)
				}
				if len(errs) > 0 {
					continue
				}
				crds = append(crds, CRD{File: file, Document: doc.index, Line: doc.line, Item: i, Definition: crd})
			}
			continue
		}
		crd, group, errs := decodeCRD(js)
		for _, err := range errs {
			fail(-1, group, err)
		}
		if len(errs) > 0 {
			continue
		}
		crds = append(crds, CRD{File: file, Document: doc.index, Line: doc.line, Item: -1, Definition: crd})
	}
	return crds, errors.Join(errs...)
}

// decodeCRD decodes one object strictly and validates it, returning one error per problem. It
// returns the group when it got that far, for CRDError.Group.
func decodeCRD(js []byte) (*apiextensionsv1.CustomResourceDefinition, string, []error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Group string `json:"group"`
		} `json:"spec"`
	}
	_ = yaml.Unmarshal(js, &head)
	one := func(err error) []error { return []error{err} }
	switch {
	case head.APIVersion == "" || head.Kind == "":
		return nil, "", one(errors.New("has no apiVersion and kind: a CRD manifest starts with apiVersion: apiextensions.k8s.io/v1 and kind: CustomResourceDefinition"))
	case head.Kind == "CustomResourceDefinition" && head.APIVersion == "apiextensions.k8s.io/v1beta1":
		return nil, head.Spec.Group, one(errors.New("is an apiextensions.k8s.io/v1beta1 CustomResourceDefinition, which Kubernetes no longer serves: convert it to apiextensions.k8s.io/v1"))
	case head.Kind != "CustomResourceDefinition" || head.APIVersion != "apiextensions.k8s.io/v1":
		return nil, "", one(fmt.Errorf("is a %s %s, not an apiextensions.k8s.io/v1 CustomResourceDefinition: --api-config takes only CRDs", head.APIVersion, head.Kind))
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	strict, err := k8sjson.UnmarshalStrict(js, crd)
	if err != nil {
		return nil, head.Spec.Group, one(fmt.Errorf("cannot be decoded: %w", err))
	}
	if len(strict) > 0 {
		errs := make([]error, len(strict))
		for i, e := range strict {
			errs[i] = fmt.Errorf("%w: fix the spelling or remove the field", e)
		}
		return nil, head.Spec.Group, errs
	}
	defaultCRD(crd)
	if fieldErrs := validateCRD(crd); len(fieldErrs) > 0 {
		errs := make([]error, len(fieldErrs))
		for i, e := range fieldErrs {
			errs[i] = e
		}
		return nil, crd.Spec.Group, errs
	}
	return crd, crd.Spec.Group, nil
}

// defaultCRD fills in what kube's defaulting fills in.
func defaultCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	n := &crd.Spec.Names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
}

// absoluteYAMLLine turns the document-relative "line N" of a YAML error into a line of the file.
func absoluteYAMLLine(msg string, docLine int) string {
	const marker = "yaml: line "
	i := strings.Index(msg, marker)
	if i < 0 {
		return msg
	}
	j := i + len(marker)
	n := leadingDigits(msg[j:])
	rel, err := strconv.Atoi(msg[j : j+n])
	if n == 0 || err != nil {
		return msg
	}
	return msg[:j] + strconv.Itoa(rel+docLine-1) + msg[j+n:]
}
