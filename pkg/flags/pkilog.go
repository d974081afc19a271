package flags

import (
	"log/slog"
	"strings"

	"github.com/apictl/apictl/pkg/certs"
)

// logPKIReport logs what a run of the bootstrap PKI wrote. The files it created go in one line: a
// first start creates seven, and a line each buried the rest of the start. A re-issued, renewed or
// updated file keeps a line of its own with its reason, which an operator may have to act on (a
// client that pinned the old certificate). Each created file's own line is there from -v 4 on.
func logPKIReport(log *slog.Logger, report *certs.Report) {
	var created []string
	for _, f := range report.Files {
		if f.Action == certs.ActionKept || f.Kind == certs.KindKey {
			continue
		}
		args := []any{"path", f.Path}
		if f.Reason != "" {
			args = append(args, "reason", f.Reason)
		}
		if f.Action == certs.ActionCreated {
			created = append(created, f.Name)
			log.Debug("PKI: created "+f.Name, args...)
			continue
		}
		log.Info("PKI: "+string(f.Action)+" "+f.Name, args...)
	}
	if len(created) > 0 {
		log.Info("PKI: created "+strings.Join(created, ", "), "dir", report.Dir)
	}
}
