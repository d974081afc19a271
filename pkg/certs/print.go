package certs

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apictl/apictl/pkg/output"
)

// FormatText is the plain "Field: value" listing `apictl certs inspect` prints by default.
const FormatText output.Format = "text"

// The formats each printer accepts, the default first.
var (
	ReportFormats     = []output.Format{output.FormatTable, output.FormatJSON, output.FormatYAML}
	ListFormats       = []output.Format{output.FormatTable, output.FormatWide, output.FormatJSON, output.FormatYAML}
	InspectionFormats = []output.Format{FormatText, output.FormatJSON, output.FormatYAML}
)

// WriteReport prints what a run did: one row per file with its action, expiry and reason.
func WriteReport(w io.Writer, r *Report, f output.Format, terminal bool) error {
	switch f {
	case output.FormatJSON:
		return output.WriteJSON(w, r)
	case output.FormatYAML:
		return output.WriteYAML(w, r)
	}
	t := output.Table{Header: []string{"FILE", "ACTION", "EXPIRES", "REASON"}}
	for _, file := range r.Files {
		expires := "-"
		if file.NotAfter != nil {
			expires = FormatTime(*file.NotAfter)
		}
		t.Rows = append(t.Rows, []string{file.Path, string(file.Action), expires, file.Reason})
	}
	return output.WriteTable(w, t, terminal)
}

// WriteNotes prints a report's notes, one per line.
func WriteNotes(w io.Writer, notes []string) error {
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// WriteListing prints the certificates of a cert dir. The wide table adds SANs, usages, key
// algorithm and whether a CA is managed elsewhere.
func WriteListing(w io.Writer, l *Listing, f output.Format, terminal bool) error {
	switch f {
	case output.FormatJSON:
		return output.WriteJSON(w, l)
	case output.FormatYAML:
		return output.WriteYAML(w, l)
	}
	wide := f == output.FormatWide
	t := output.Table{Header: []string{"CERTIFICATE", "SUBJECT", "EXPIRES", "RESIDUAL TIME", "SIGNED BY", "STATUS"}}
	if wide {
		t.Header = append(t.Header, "SANS", "USAGES", "KEY ALGORITHM", "EXTERNALLY MANAGED")
	}
	for _, c := range l.Certificates {
		row := []string{c.Name, c.Subject, FormatTime(c.NotAfter), c.Residual, c.SignedBy, string(c.Status)}
		if wide {
			external := "no"
			if c.ExternallyManaged {
				external = "yes"
			}
			row = append(row, orDash(strings.Join(c.SANs, ",")), strings.Join(c.Usages, ","), c.KeyAlgorithm, external)
		}
		t.Rows = append(t.Rows, row)
	}
	if err := output.WriteTable(w, t, terminal); err != nil || len(l.Keys) == 0 {
		return err
	}
	return writeKeys(w, l.Keys, terminal)
}

// WriteListingProblems prints why each certificate that is not ok is not, and every unreadable file,
// one per line: `apiserver (apictl.local/pki/apiserver.crt): expired: expired on ...`.
func WriteListingProblems(w io.Writer, l *Listing) error {
	var b strings.Builder
	for _, c := range l.Certificates {
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "%s (%s): %s: %s\n", c.Name, c.Path, c.Status, p)
		}
	}
	for _, k := range l.Keys {
		for _, p := range k.Problems {
			fmt.Fprintf(&b, "%s (%s): %s: %s\n", k.Name, k.Path, k.Status, p)
		}
	}
	for _, u := range l.Unreadable {
		fmt.Fprintf(&b, "%s: unreadable: %s\n", u.Path, u.Problem)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteInspection prints one certificate.
func WriteInspection(w io.Writer, in *Inspection, f output.Format) error {
	switch f {
	case output.FormatJSON:
		return output.WriteJSON(w, in)
	case output.FormatYAML:
		return output.WriteYAML(w, in)
	}
	source := in.Source
	if in.ChainLength > 1 {
		source += fmt.Sprintf(" (first of a chain of %d certificates)", in.ChainLength)
	}
	ca := "no"
	if in.IsCA {
		ca = "yes"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, field := range [][2]string{
		{"Source", source},
		{"Verification", in.Verification},
		{"Subject", in.Subject},
		{"Issuer", in.Issuer},
		{"Serial number", in.SerialNumber},
		{"Not before", FormatTime(in.NotBefore)},
		{"Not after", FormatTime(in.NotAfter) + " (" + residualPhrase(in.Residual, in.ResidualSeconds) + ")"},
		{"SANs", orDash(strings.Join(in.SANs, ", "))},
		{"Usages", orDash(strings.Join(in.Usages, ", "))},
		{"CA", ca},
		{"Key algorithm", in.KeyAlgorithm},
		{"Signature algorithm", in.SignatureAlgorithm},
		{"SHA-256 fingerprint", in.SHA256Fingerprint},
		{"SHA-1 fingerprint", in.SHA1Fingerprint},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", field[0], field[1])
	}
	return tw.Flush()
}

func residualPhrase(residual string, seconds int64) string {
	if seconds < 0 {
		return "expired " + strings.TrimPrefix(residual, "-") + " ago"
	}
	return residual + " left"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
