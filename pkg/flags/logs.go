package flags

import (
	"io"
	"log/slog"
	"strconv"

	"github.com/spf13/pflag"
)

// Log formats --log-format accepts.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// LogsOptions configure apictl's structured logger.
type LogsOptions struct {
	// Verbosity is klog-style: 0 logs what operators need, higher numbers add detail.
	Verbosity int
	// Format is text or json.
	Format string
}

// NewLogsOptions returns quiet text logs.
func NewLogsOptions() *LogsOptions { return &LogsOptions{Format: LogFormatText} }

// AddFlags registers the log flags with the current values as defaults.
func (o *LogsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "number for the log level verbosity")
	fs.StringVar(&o.Format, "log-format", o.Format, "Sets the log format. Permitted formats: \"text\", \"json\".")
}

// Complete has nothing to fill in.
func (o *LogsOptions) Complete() error { return nil }

// Validate reports an unknown format or a negative verbosity.
func (o *LogsOptions) Validate() []error {
	var errs []error
	if o.Verbosity < 0 {
		errs = append(errs, problemf(SectionLogs, "v", strconv.Itoa(o.Verbosity), "can not be negative: use 0 (the default) up to 10"))
	}
	if o.Format != LogFormatText && o.Format != LogFormatJSON {
		errs = append(errs, problemf(SectionLogs, "log-format", o.Format, "is not a log format: use text or json"))
	}
	return errs
}

// NewLogger returns a logger writing to w. Verbosity n enables slog levels down to Info-n, so -v 4
// shows Debug.
func (o *LogsOptions) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(-o.Verbosity)}
	if o.Format == LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
