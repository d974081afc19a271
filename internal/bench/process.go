package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// stopTimeout is how long a child gets to exit after SIGTERM before it is killed.
	stopTimeout = 15 * time.Second
	// outputWaitDelay is how long output is still collected after a child exits.
	outputWaitDelay = time.Second
)

// process is a running child: `apictl serve` or the etcd helper.
type process struct {
	name   string
	cmd    *exec.Cmd
	output *tailBuffer
	// slow counts etcd's slow applies in the output (an embedded etcd's server).
	slow *slowApplies
	done chan struct{} // closed once the process has exited
	err  error         // Wait's result, set before done closes
	once sync.Once
}

// startProcess runs binary with args in dir. The child's environment is the harness's without
// APICTL_* (a developer's settings must not change what is measured) and without a systemd notify
// socket; it dies with the harness where the OS allows.
func startProcess(name, binary string, args []string, dir string) (*process, error) {
	p := &process{name: name, output: newTailBuffer(64 << 10), slow: &slowApplies{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Dir = dir
	p.cmd.Env = childEnv(os.Environ())
	out := io.MultiWriter(p.output, p.slow)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = sysProcAttr()
	// A grandchild that outlives the child keeps its output pipe open; Wait must not wait for it.
	p.cmd.WaitDelay = outputWaitDelay
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// childEnv drops APICTL_* and NOTIFY_SOCKET from env.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "APICTL_") || strings.HasPrefix(kv, "NOTIFY_SOCKET=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// exited reports whether the process has ended, with an error that carries the end of its output.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); its output ends with:\n%s", p.name, p.err, p.output)
	default:
		return nil
	}
}

// stop sends SIGTERM and waits for the exit, killing the process if it does not go within
// stopTimeout. Calling stop again waits for the same exit.
func (p *process) stop() error {
	var err error
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		if e := p.cmd.Process.Signal(syscall.SIGTERM); e != nil && !errors.Is(e, os.ErrProcessDone) {
			err = fmt.Errorf("stopping %s: %w", p.name, e)
		}
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.done
			err = fmt.Errorf("stopping %s: no exit within %s of SIGTERM, killed; its output ends with:\n%s", p.name, stopTimeout, p.output)
		}
	})
	<-p.done
	return err
}

// memory reads the process's resident set and its high-water mark.
func (p *process) memory() (rss, peak int64, err error) {
	m, err := p.memoryDetail()
	return m.RSS, m.Peak, err
}

// memoryDetail reads the process's resident set, its high-water mark and how the set divides.
func (p *process) memoryDetail() (procMemory, error) {
	m, err := readMemory(p.cmd.Process.Pid)
	if err != nil {
		return procMemory{}, fmt.Errorf("reading the memory of %s: %w", p.name, err)
	}
	return m, nil
}

// procMemory is a process's memory as /proc/<pid>/status reports it, in bytes.
type procMemory struct {
	RSS  int64 // VmRSS
	Peak int64 // VmHWM
	// Anon and File divide RSS: anonymous memory (heap, stacks, etcd's caches) and file pages
	// mapped in (mostly the binary's own). Zero on kernels before 4.5, which do not report them.
	Anon int64 // RssAnon
	File int64 // RssFile
}

// readMemory reads the memory lines of /proc/<pid>/status.
func readMemory(pid int) (procMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	defer f.Close()
	return parseProcStatus(f)
}

// parseProcStatus reads VmRSS and VmHWM, which must be there, and RssAnon and RssFile, which may
// not, from a /proc/<pid>/status.
func parseProcStatus(r io.Reader) (procMemory, error) {
	var m procMemory
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.Peak, "RssAnon": &m.Anon, "RssFile": &m.File}
	required := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		dst := fields[key]
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return procMemory{}, fmt.Errorf("%s: unexpected value %q", key, value)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return procMemory{}, fmt.Errorf("%s: %w", key, err)
		}
		*dst = kb << 10
		if key == "VmRSS" || key == "VmHWM" {
			required++
		}
	}
	if err := sc.Err(); err != nil {
		return procMemory{}, err
	}
	if required != 2 {
		return procMemory{}, errors.New("no VmRSS and VmHWM lines")
	}
	return m, nil
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: fixed at 100 per second in Linux's ABI,
// whatever the kernel's own tick.
const userHZ = 100

// cpuTime reads the CPU time the process has used so far, user and system, all threads.
func (p *process) cpuTime() (time.Duration, error) {
	return procCPUTime(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid), p.name)
}

// procCPUTime reads the CPU time of the process whose /proc/<pid>/stat is path, named name in errors.
func procCPUTime(path, name string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of %s: %w", name, err)
	}
	d, err := parseProcStat(string(b))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of %s: %w", name, err)
	}
	return d, nil
}

// parseProcStat returns utime + stime from a /proc/<pid>/stat line. The command name in parentheses
// may hold spaces and parentheses itself, so the fields are counted from the last ')'.
func parseProcStat(line string) (time.Duration, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, errors.New("no ')' after the command name")
	}
	// After ")": state (field 3), ... utime (field 14), stime (field 15).
	f := strings.Fields(line[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU ticks %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// waitFor polls cond every interval until it returns true, the process exits or ctx ends.
func (p *process) waitFor(ctx context.Context, what string, interval time.Duration, cond func(context.Context) bool) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if cond(ctx) {
			return nil
		}
		if err := p.exited(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; output so far:\n%s", what, context.Cause(ctx), p.output)
		case <-t.C:
		}
	}
}

// tailBuffer keeps the last max bytes written to it, for error messages about a child.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
