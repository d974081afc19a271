package flags

import (
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// minMemoryBudget is the least budget accepted: the server alone, idle, holds about 50 MiB.
const minMemoryBudget = 128 << 20

// machineMemory is the memory the process may use: the smaller of the machine's (MemTotal in
// /proc/meminfo) and its cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes); 0 when neither
// can be read, as off Linux.
func machineMemory(readFile func(string) ([]byte, error)) int64 {
	var total int64
	if data, err := readFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					total = kib << 10
				}
			}
		}
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := readFile(path)
		if err != nil {
			continue
		}
		// "max" (v2) and v1's page-rounded MaxInt64 both mean no limit.
		limit, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err == nil && limit > 0 && limit < 1<<60 && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// defaultMemoryBudget is three quarters of what the process may use: the rest is for the
// collector's headroom, the binary and the page cache etcd reads through.
func defaultMemoryBudget() int64 { return machineMemory(os.ReadFile) / 4 * 3 }

// checkMemoryBudget reports a --memory-budget that is no quantity, negative or too small to serve.
func checkMemoryBudget(section, value string) *Problem {
	if value == "" {
		return nil
	}
	q, err := resource.ParseQuantity(value)
	switch {
	case err != nil:
		return problemf(section, "memory-budget", value, "is not a quantity: give bytes with a suffix, such as 2Gi or 1500Mi, or 0 for no budget")
	case q.Sign() < 0:
		return problemf(section, "memory-budget", value, "can not be negative: give a size such as 2Gi, or 0 for no budget")
	case q.Sign() > 0 && q.Value() < minMemoryBudget:
		return problemf(section, "memory-budget", value, "is too small to serve in: give at least 128Mi, or 0 for no budget")
	}
	return nil
}
