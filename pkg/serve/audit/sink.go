package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"gopkg.in/natefinch/lumberjack.v2"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// LogOptions say where the audit log goes and how it rotates: kube's --audit-log-* flags.
type LogOptions struct {
	// Path is the log file; "-" is standard output.
	Path string
	// MaxAge is the number of days to keep rotated files (0: no limit).
	MaxAge int
	// MaxBackups is the number of rotated files to keep (0: no limit).
	MaxBackups int
	// MaxSize is the size in megabytes that starts a new file (0: never rotate).
	MaxSize int
	// Compress gzips rotated files.
	Compress bool
}

// OpenLog opens the audit log as kube does: the directory is created 0700 and the file 0600, and it is
// appended to; with a MaxSize it is rotated by lumberjack, the library kube uses, so backups are named
// and aged the same way (<name>-<timestamp>.<ext>).
func OpenLog(o LogOptions) (io.WriteCloser, error) {
	if o.Path == "-" {
		return nopCloser{os.Stdout}, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit log directory: %w", err)
	}
	f, err := os.OpenFile(o.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	if o.MaxSize == 0 {
		return f, nil
	}
	f.Close()
	return &lumberjack.Logger{Filename: o.Path, MaxAge: o.MaxAge, MaxBackups: o.MaxBackups, MaxSize: o.MaxSize, Compress: o.Compress}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// sink writes events as JSON lines. Writes are serialized so that lines never interleave; like kube's
// log backend in its default blocking mode, a request waits for its event to be written.
type sink struct {
	mu  sync.Mutex
	out io.Writer
	log *slog.Logger
	// failing is set while writes fail, so that an outage is logged once and its end once more.
	failing atomic.Bool
}

// write encodes ev and writes it as one line; false if it could not be stored.
func (s *sink) write(ev *auditv1.Event) bool {
	line, err := json.Marshal(ev)
	if err != nil {
		// Only an object that is not valid JSON gets here; the event is still worth having without it.
		s.log.Error("encoding an audit event; writing it without request and response objects", "auditID", ev.AuditID, "err", err)
		ev.RequestObject, ev.ResponseObject = nil, nil
		if line, err = json.Marshal(ev); err != nil {
			return false
		}
	}
	line = append(line, '\n')
	s.mu.Lock()
	_, err = s.out.Write(line)
	s.mu.Unlock()
	if err != nil {
		if !s.failing.Swap(true) {
			s.log.Error("writing the audit log failed; a request whose first event cannot be written gets 500 until it works again", "err", err)
		}
		return false
	}
	if s.failing.Swap(false) {
		s.log.Info("writing the audit log works again")
	}
	return true
}
