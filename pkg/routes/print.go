package routes

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apictl/apictl/pkg/output"
)

// Output formats of `apictl routes`. Write prints the first five; the OpenAPI formats are documents
// built by the openapi package.
const (
	FormatOpenAPIV2 output.Format = "openapi-v2"
	FormatOpenAPIV3 output.Format = "openapi-v3"
)

// Formats lists every format `apictl routes` offers, the default first.
func Formats() []output.Format {
	return []output.Format{output.FormatTable, output.FormatWide, output.FormatJSON, output.FormatYAML, output.FormatMarkdown, FormatOpenAPIV2, FormatOpenAPIV3}
}

// NonResourceSection names the section of non-resource routes.
const NonResourceSection = "non-resource"

// Section is the routes of one group version (Name /api/v1 or /apis/<group>/<version>), or the
// non-resource routes (Name NonResourceSection).
type Section struct {
	Name    string  `json:"name"`
	Group   string  `json:"group"`
	Version string  `json:"version,omitempty"`
	Summary Summary `json:"summary"`
	Routes  []Route `json:"routes"`
}

// Summary counts routes, resources (not subresources) and groups.
type Summary struct {
	Routes    int `json:"routes"`
	Resources int `json:"resources"`
	Groups    int `json:"groups,omitempty"`
}

// Report is what the JSON and YAML formats print: the sections and the total.
type Report struct {
	Sections []Section `json:"sections"`
	Total    Summary   `json:"total"`
}

// Sections splits the table into sections in table order, the non-resource routes last.
func (t Table) Sections() []Section {
	var out []Section
	var nonResource []Route
	index := map[string]int{}
	for _, r := range t.Routes {
		if !r.IsResource() {
			nonResource = append(nonResource, r)
			continue
		}
		name := GroupVersionPath(r.Group, r.Version)
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, Section{Name: name, Group: r.Group, Version: r.Version})
		}
		out[i].Routes = append(out[i].Routes, r)
	}
	if len(nonResource) > 0 {
		out = append(out, Section{Name: NonResourceSection, Routes: nonResource})
	}
	for i := range out {
		out[i].Summary = summarize(out[i].Routes)
		out[i].Summary.Groups = 0
	}
	return out
}

// Summary counts the whole table.
func (t Table) Summary() Summary { return summarize(t.Routes) }

func summarize(routes []Route) Summary {
	resources := map[string]bool{}
	groups := map[string]bool{}
	for _, r := range routes {
		if r.IsResource() {
			resources[r.Group+"/"+r.Version+"/"+r.Resource] = true
			groups[r.Group] = true
		}
	}
	return Summary{Routes: len(routes), Resources: len(resources), Groups: len(groups)}
}

// Write prints the table in format f: table or wide (one aligned table per section with a summary
// line and a total on a terminal; tab-separated rows only in a pipe), json, yaml or markdown.
func Write(w io.Writer, t Table, f output.Format, terminal bool) error {
	sections := t.Sections()
	total := t.Summary()
	switch f {
	case output.FormatJSON:
		return output.WriteJSON(w, Report{Sections: nonNil(sections), Total: total})
	case output.FormatYAML:
		return output.WriteYAML(w, Report{Sections: nonNil(sections), Total: total})
	case output.FormatTable, output.FormatWide, output.FormatMarkdown:
	default:
		return fmt.Errorf("unknown output format %q for the route table", f)
	}
	wide := f == output.FormatWide
	for i, s := range sections {
		tbl := output.Table{Title: s.Name, Header: header(wide), Rows: rows(s.Routes, wide)}
		switch {
		case f == output.FormatMarkdown:
			if err := output.WriteMarkdown(w, tbl); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "\n%s\n\n", s.Summary.line()); err != nil {
				return err
			}
		case terminal:
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if err := output.WriteTable(w, tbl, true); err != nil {
				return err
			}
			if _, err := fmt.Fprintln(w, s.Summary.line()); err != nil {
				return err
			}
		default:
			if err := output.WriteTable(w, tbl, false); err != nil {
				return err
			}
		}
	}
	switch {
	case f == output.FormatMarkdown:
		_, err := fmt.Fprintf(w, "**Total:** %s\n", total.line())
		return err
	case terminal:
		_, err := fmt.Fprintf(w, "\nTotal: %s\n", total.line())
		return err
	}
	return nil
}

func nonNil(s []Section) []Section {
	if s == nil {
		return []Section{}
	}
	return s
}

// line reads "12 routes, 1 resource", with groups "12 routes, 1 resource, 1 group", and "24 routes"
// for the non-resource routes.
func (s Summary) line() string {
	parts := []string{plural(s.Routes, "route")}
	if s.Resources > 0 || s.Groups > 0 {
		parts = append(parts, plural(s.Resources, "resource"))
	}
	if s.Groups > 0 {
		parts = append(parts, plural(s.Groups, "group"))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func header(wide bool) []string {
	h := []string{"METHOD", "PATH", "VERB", "OPERATION"}
	if wide {
		h = append(h, "ACTION", "SCOPE", "KIND", "LONG-RUNNING", "DOC")
	}
	return h
}

func rows(routes []Route, wide bool) [][]string {
	out := make([][]string, len(routes))
	for i, r := range routes {
		row := []string{r.Method, r.Path, r.Verb, dash(r.OperationID)}
		if wide {
			action := string(r.Action)
			if action == "" {
				action = string(r.Endpoint)
			}
			long := "false"
			if r.LongRunning {
				long = "true"
			}
			row = append(row, action, dash(string(r.Scope)), dash(r.Kind), long, dash(r.Doc))
		}
		out[i] = row
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
