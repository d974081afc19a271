package flags

import (
	"os"
	"testing"
)

func TestMachineMemory(t *testing.T) {
	const meminfo = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"machine only", map[string]string{"/proc/meminfo": meminfo}, 24576000 << 10},
		{"cgroup v2 limit below it", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "2147483648\n"}, 2 << 30},
		{"cgroup v2 without a limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "max\n"}, 24576000 << 10},
		{"cgroup v1 without a limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 24576000 << 10},
		{"cgroup v1 limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"nothing readable", map[string]string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := machineMemory(func(path string) ([]byte, error) {
				if s, ok := tc.files[path]; ok {
					return []byte(s), nil
				}
				return nil, os.ErrNotExist
			})
			if got != tc.want {
				t.Errorf("machineMemory = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMemoryBudgetComplete(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int64
	}{{"2Gi", 2 << 30}, {"1500Mi", 1500 << 20}, {"0", 0}, {"", defaultMemoryBudget()}} {
		o := NewGenericOptions()
		o.MemoryBudget = tc.value
		if errs := o.Validate(); len(errs) > 0 {
			t.Errorf("--memory-budget %q: %v", tc.value, errs)
		}
		if err := o.Complete(); err != nil || o.MemoryBudgetBytes != tc.want {
			t.Errorf("--memory-budget %q: %d bytes (%v), want %d", tc.value, o.MemoryBudgetBytes, err, tc.want)
		}
	}
	if defaultMemoryBudget() <= 0 {
		t.Log("this machine's memory is unreadable: no default budget")
	}
}
