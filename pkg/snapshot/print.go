package snapshot

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/apictl/apictl/pkg/output"
)

// ListFormats are the formats WriteList prints.
var ListFormats = []output.Format{output.FormatTable, output.FormatJSON}

// WriteList prints snapshots as a table (terminal: aligned, with a header) or as JSON.
func WriteList(w io.Writer, snaps []Info, f output.Format, terminal bool) error {
	if f == output.FormatJSON {
		type item struct {
			Info
			Path     string `json:"path"`
			Recorded bool   `json:"recorded"`
		}
		items := make([]item, len(snaps))
		for i, s := range snaps {
			items[i] = item{Info: s, Path: s.Path, Recorded: s.Recorded}
		}
		return output.WriteJSON(w, items)
	}
	t := output.Table{Header: []string{"NAME", "CREATED", "REVISION", "KEYS", "SIZE", "SHA256", "APICTL"}}
	for _, s := range snaps {
		rev, keys, sum, apictl := "-", "-", "-", "-"
		if s.Recorded {
			rev, keys, sum, apictl = strconv.FormatInt(s.Revision, 10), strconv.Itoa(s.Keys), s.SHA256[:min(12, len(s.SHA256))], s.ApictlVersion
		}
		t.Rows = append(t.Rows, []string{s.Name, s.Created.UTC().Format(time.RFC3339), rev, keys, strconv.FormatInt(s.Size, 10), sum, apictl})
	}
	return output.WriteTable(w, t, terminal)
}

// Describe is one line saying what a snapshot holds, for the commands that make or restore one.
func Describe(s Info) string {
	return fmt.Sprintf("revision %d, %d keys, %d bytes, sha256 %s", s.Revision, s.Keys, s.Size, s.SHA256)
}
