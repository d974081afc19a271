package bench

import (
	"bytes"
	"regexp"
	"sync"
	"time"
)

// slowApplyMessage is what etcd logs when applying a request took long; the embedded etcd's log
// keeps it from 500 ms (pkg/storage/embedded), with the time in a took= attribute.
const slowApplyMessage = "apply request took too long"

// SlowApplyLimit is issue 38's bound: no apply over 1 s in the server's log while LISTs run.
const SlowApplyLimit = time.Second

var tookAttr = regexp.MustCompile(`\btook=([0-9.]+[a-zµ]+)`)

// slowApplies watches a child's output, line by line as it is written, for etcd's slow applies: a
// tail buffer keeps only the end of the output, and a slow apply must count wherever it falls.
type slowApplies struct {
	mu      sync.Mutex
	partial []byte
	count   int // lines over SlowApplyLimit, or whose time could not be read
	slowest time.Duration
}

func (s *slowApplies) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	start := 0
	for {
		i := bytes.IndexByte(s.partial[start:], '\n')
		if i < 0 {
			break
		}
		s.line(s.partial[start : start+i])
		start += i + 1
	}
	// A line that never ends must not grow without bound: its start has been seen.
	if len(s.partial)-start > 64<<10 {
		s.line(s.partial[start:])
		start = len(s.partial)
	}
	s.partial = s.partial[:copy(s.partial, s.partial[start:])]
	return len(p), nil
}

func (s *slowApplies) line(l []byte) {
	if !bytes.Contains(l, []byte(slowApplyMessage)) {
		return
	}
	m := tookAttr.FindSubmatch(l)
	if m == nil {
		s.count++
		return
	}
	d, err := time.ParseDuration(string(m[1]))
	if err != nil || d > SlowApplyLimit {
		s.count++
	}
	s.slowest = max(s.slowest, d)
}

// read returns how many slow applies were over SlowApplyLimit so far, and the slowest.
func (s *slowApplies) read() (over int, slowest time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, s.slowest
}
