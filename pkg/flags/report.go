package flags

import (
	"fmt"
	"io"
	"strings"

	"github.com/apictl/apictl/pkg/output"
)

// ListFormats are the formats of `apictl flags list`.
var ListFormats = []output.Format{output.FormatTable, output.FormatJSON, output.FormatYAML, output.FormatMarkdown}

// ReportFormats are the formats of `apictl flags validate` and `apictl flags show`.
var ReportFormats = []output.Format{output.FormatTable, output.FormatJSON, output.FormatYAML}

// WriteList prints flag descriptions: one table per section on a terminal and in Markdown, one
// tab-separated record per flag (section first) in a pipe.
func WriteList(w io.Writer, infos []FlagInfo, format output.Format, terminal bool) error {
	switch format {
	case output.FormatJSON:
		return output.WriteJSON(w, infos)
	case output.FormatYAML:
		return output.WriteYAML(w, infos)
	}
	short := format == output.FormatTable
	if !terminal && short {
		var t output.Table
		for _, info := range infos {
			t.Rows = append(t.Rows, append([]string{info.Section}, listRow(info, short)...))
		}
		return output.WriteTable(w, t, false)
	}
	for i, group := range bySection(infos) {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		t := output.Table{Title: Header(group[0].Section), Header: []string{"FLAG", "TYPE", "DEFAULT", "ENV", "DESCRIPTION"}}
		for _, info := range group {
			t.Rows = append(t.Rows, listRow(info, short))
		}
		var err error
		if format == output.FormatMarkdown {
			t.Title = strings.TrimSuffix(t.Title, ":")
			err = output.WriteMarkdown(w, t)
		} else {
			err = output.WriteTable(w, t, true)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func listRow(info FlagInfo, short bool) []string {
	name := "--" + info.Flag
	if info.Shorthand != "" {
		name = "-" + info.Shorthand + ", " + name
	}
	desc := info.Description
	if short {
		desc = firstSentence(desc)
	}
	return []string{name, info.Type, info.Default, info.Env, desc}
}

// bySection splits infos, which are in help order, into runs of one section each.
func bySection(infos []FlagInfo) [][]FlagInfo {
	var groups [][]FlagInfo
	for i, info := range infos {
		if i == 0 || info.Section != infos[i-1].Section {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], info)
	}
	return groups
}

// validationReport is the JSON and YAML shape of `apictl flags validate`.
type validationReport struct {
	Valid    bool       `json:"valid"`
	Errors   []*Problem `json:"errors"`
	Warnings []*Problem `json:"warnings"`
}

// WriteValidation prints the problems found, or one line saying there are none.
func WriteValidation(w io.Writer, e Evaluation, format output.Format, terminal bool) error {
	switch format {
	case output.FormatJSON, output.FormatYAML:
		r := validationReport{Valid: e.Valid(), Errors: e.Errors, Warnings: e.Warnings}
		if r.Errors == nil {
			r.Errors = []*Problem{}
		}
		if r.Warnings == nil {
			r.Warnings = []*Problem{}
		}
		if format == output.FormatJSON {
			return output.WriteJSON(w, r)
		}
		return output.WriteYAML(w, r)
	}
	if e.Valid() && len(e.Warnings) == 0 {
		_, err := io.WriteString(w, "OK: the configuration is valid\n")
		return err
	}
	t := output.Table{Header: []string{"SEVERITY", "SECTION", "FLAG", "VALUE", "PROBLEM"}}
	for _, p := range e.Errors {
		t.Rows = append(t.Rows, problemRow("error", p))
	}
	for _, p := range e.Warnings {
		t.Rows = append(t.Rows, problemRow("warning", p))
	}
	if err := output.WriteTable(w, t, terminal); err != nil {
		return err
	}
	if !terminal {
		return nil
	}
	summary := fmt.Sprintf("\n%d error(s), %d warning(s)\n", len(e.Errors), len(e.Warnings))
	if e.Valid() {
		summary = fmt.Sprintf("\nOK: the configuration is valid, with %d warning(s)\n", len(e.Warnings))
	}
	_, err := io.WriteString(w, summary)
	return err
}

func problemRow(severity string, p *Problem) []string {
	flag := ""
	if p.Flag != "" {
		flag = "--" + p.Flag
	}
	return []string{severity, p.Section, flag, p.Value, p.Message}
}

// WriteSettings prints every flag's effective value and where it came from.
func WriteSettings(w io.Writer, settings []Setting, format output.Format, terminal bool) error {
	switch format {
	case output.FormatJSON:
		return output.WriteJSON(w, settings)
	case output.FormatYAML:
		return output.WriteYAML(w, settings)
	}
	t := output.Table{Header: []string{"SECTION", "FLAG", "VALUE", "SOURCE"}}
	for _, s := range settings {
		t.Rows = append(t.Rows, []string{s.Section, "--" + s.Flag, s.Value, string(s.Source)})
	}
	return output.WriteTable(w, t, terminal)
}

// firstSentence shortens a flag's help to fit a table cell.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// WriteProblems prints one line per problem, errors first, for a log or a terminal. It prints nothing
// for a clean configuration and ends with how to see the same report as a table.
func WriteProblems(w io.Writer, e Evaluation) error {
	if len(e.Errors) == 0 && len(e.Warnings) == 0 {
		return nil
	}
	var b strings.Builder
	for _, p := range e.Errors {
		fmt.Fprintf(&b, "error: %s: %v\n", p.Section, p)
	}
	for _, p := range e.Warnings {
		fmt.Fprintf(&b, "warning: %s: %v\n", p.Section, p)
	}
	if len(e.Errors) > 0 {
		fmt.Fprintf(&b, "%d error(s) in the configuration; `apictl flags validate` with the same flags prints them as a table\n", len(e.Errors))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
