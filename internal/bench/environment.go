package bench

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Environment says where and how the numbers were measured, so that runs on different machines are not
// compared by mistake.
type Environment struct {
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"numCPU"`
	CPUModel   string `json:"cpuModel"`
	// Warmup and Duration are each measurement's unrecorded and recorded parts.
	Warmup   time.Duration `json:"warmupNanoseconds"`
	Duration time.Duration `json:"durationNanoseconds"`
	Short    bool          `json:"short"`
	// Etcd describes the etcd both sides use.
	Etcd string `json:"etcd"`
	// Client describes the load generator's HTTP clients.
	Client string `json:"client"`
	// CRDs is how many CRDs the measured server had installed (Config.CRDs).
	CRDs int `json:"crds,omitempty"`
}

// Descriptions of the fixed parts of the set-up, printed with every report.
const (
	etcdDescription   = "one member (pkg/storage/embedded) in its own process on loopback, fsync on"
	clientDescription = "keep-alive; http/1.1: one transport per concurrency with an idle connection per worker; " +
		"h2+tls: one transport per concurrency, HTTP/2 only, admin client certificate; no compression"
)

func currentEnvironment() Environment {
	return Environment{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		CPUModel:   cpuModel(),
		Etcd:       etcdDescription,
		Client:     clientDescription,
	}
}

// cpuModel reads the processor's name from /proc/cpuinfo; "unknown" where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	return parseCPUModel(f)
}

// parseCPUModel returns the first "model name" of a /proc/cpuinfo (x86) or, failing that, its first
// "Model" or "Hardware" line (arm).
func parseCPUModel(r io.Reader) string {
	fallback := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "model name":
			if value != "" {
				return value
			}
		case "Model", "Hardware":
			if fallback == "" {
				fallback = value
			}
		}
	}
	if fallback == "" {
		return "unknown"
	}
	return fallback
}
