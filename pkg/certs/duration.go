package certs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

const (
	day  = 24 * time.Hour
	year = 365 * day
)

// ParseDuration reads a validity or warning period: a Go duration (8760h, 90m) or a whole number of
// days or years (30d, 1y, 10y), since certificate lifetimes are thought of in days and years.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": day, "y": year} {
		if n, ok := strings.CutSuffix(t, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("invalid duration %q: use a whole number of days or years (30d, 1y) or a Go duration (8760h)", s)
			}
			if v > int64(200*year/unit) || v < -int64(200*year/unit) {
				return 0, fmt.Errorf("invalid duration %q: more than 200 years", s)
			}
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: use a whole number of days or years (30d, 1y) or a Go duration (8760h)", s)
	}
	return d, nil
}

// FormatDuration prints a period the way ParseDuration reads it, in years or days when it is a whole
// number of them: 1y, 30d, 1h0m0s.
func FormatDuration(d time.Duration) string {
	switch {
	case d != 0 && d%year == 0:
		return fmt.Sprintf("%dy", d/year)
	case d != 0 && d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}

// FormatResidual prints the time left like kubeadm's RESIDUAL TIME (348d, 9y, 23h, 59m); time past
// the expiry is negative (-3d).
func FormatResidual(d time.Duration) string {
	if d < 0 {
		return "-" + duration.ShortHumanDuration(-d)
	}
	return duration.ShortHumanDuration(d)
}

// FormatTime prints an expiry like kubeadm's EXPIRES column: Apr 09, 2027 09:17 UTC.
func FormatTime(t time.Time) string {
	return t.UTC().Format("Jan 02, 2006 15:04 MST")
}
