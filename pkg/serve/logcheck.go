package serve

import (
	"io"

	"sync"
)

// CheckedWriter is the writer under the server's logger. It remembers the last write error, so the
// `log` health check fails when logs cannot be written (a closed stderr, a full disk) and recovers
// with the next successful write.
type CheckedWriter struct {
	w io.Writer

	mu  sync.Mutex
	err error
}

// NewCheckedWriter wraps w.
func NewCheckedWriter(w io.Writer) *CheckedWriter { return &CheckedWriter{w: w} }

// Write writes to the underlying writer and records the outcome.
func (c *CheckedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	return n, err
}

// Err returns the error of the last write, if it failed.
func (c *CheckedWriter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
