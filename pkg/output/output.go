// Package output prints apictl's reports for people and for pipes: aligned tables on a terminal,
// tab-separated rows in a pipe, and JSON, YAML or Markdown for machines and documents.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"
)

// Format is an output format named by -o.
type Format string

// The formats commands offer; each command accepts a subset.
const (
	FormatTable    Format = "table"
	FormatWide     Format = "wide"
	FormatJSON     Format = "json"
	FormatYAML     Format = "yaml"
	FormatMarkdown Format = "markdown"
)

// ParseFormat checks s against the formats a command accepts.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(names, ", "))
}

// Table is a header and rows of cells, with an optional title printed above it.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// WriteTable prints t. On a terminal it is an aligned table with a header, as kubectl prints; in a pipe
// it is tab-separated rows without a header, so that cut and awk see one record per line.
func WriteTable(w io.Writer, t Table, terminal bool) error {
	if !terminal {
		var b strings.Builder
		for _, row := range t.Rows {
			b.WriteString(strings.Join(row, "\t"))
			b.WriteByte('\n')
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	var buf bytes.Buffer
	if t.Title != "" {
		buf.WriteString(t.Title)
		buf.WriteByte('\n')
	}
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Right: "   ", Overwrite: true}),
	)
	tbl.Header(toAny(t.Header)...)
	for _, row := range t.Rows {
		// tablewriter keeps the slice it is given; copy so callers may reuse theirs.
		if err := tbl.Append(toAny(row)...); err != nil {
			return fmt.Errorf("adding a table row: %w", err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("rendering a table: %w", err)
	}
	// The renderer pads the last column too; kubectl's tables end each line at the text.
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		trimmed := strings.TrimRight(line, " \n")
		if line == "" {
			continue
		}
		if _, err := io.WriteString(w, trimmed+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown prints t as a GitHub-flavoured Markdown table, with the title as a heading.
func WriteMarkdown(w io.Writer, t Table) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", t.Title)
	}
	b.WriteString("| " + strings.Join(escapeCells(t.Header), " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(t.Header)) + "\n")
	for _, row := range t.Rows {
		b.WriteString("| " + strings.Join(escapeCells(row), " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	return nil
}

// WriteYAML prints v as YAML, converted from its JSON form so that json tags name the keys.
func WriteYAML(w io.Writer, v any) error {
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding YAML: %w", err)
	}
	_, err = w.Write(out)
	return err
}

func toAny(cells []string) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		out[i] = c
	}
	return out
}

func escapeCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		c = strings.ReplaceAll(c, "|", `\|`)
		out[i] = strings.ReplaceAll(c, "\n", "<br>")
	}
	return out
}
