package printers

import (
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppendAge appends Age(t, now) to dst.
//
// It is a port of HumanDuration (k8s.io/apimachinery pkg/util/duration/duration.go, v0.37.2) that
// appends rather than formats with fmt.Sprintf: a streamed Table LIST of custom resources writes an
// Age cell per row (tables.Builder.AppendStoredRow), and Sprintf's string and the cell's boxing were
// three of a row's four allocations, 90 MiB of garbage for each LIST of a million objects (issue 38,
// BenchmarkAppendStoredRow). TestAppendAge holds it to HumanDuration.
func AppendAge(dst []byte, t metav1.Time, now time.Time) []byte {
	if t.IsZero() {
		return append(dst, "<unknown>"...)
	}
	return appendHumanDuration(dst, now.Sub(t.Time))
}

func appendHumanDuration(dst []byte, d time.Duration) []byte {
	// Up to 2 s ahead is taken for clock skew and written as now.
	if seconds := int(d.Seconds()); seconds < -1 {
		return append(dst, "<invalid>"...)
	} else if seconds < 0 {
		return append(dst, "0s"...)
	} else if seconds < 60*2 {
		return appendUnits(dst, seconds, 's', 0, 0)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		return appendUnits(dst, minutes, 'm', int(d/time.Second)%60, 's')
	} else if minutes < 60*3 {
		return appendUnits(dst, minutes, 'm', 0, 0)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		return appendUnits(dst, hours, 'h', int(d/time.Minute)%60, 'm')
	case hours < 48:
		return appendUnits(dst, hours, 'h', 0, 0)
	case hours < 24*8:
		return appendUnits(dst, hours/24, 'd', hours%24, 'h')
	case hours < 24*365*2:
		return appendUnits(dst, hours/24, 'd', 0, 0)
	case hours < 24*365*8:
		return appendUnits(dst, hours/24/365, 'y', (hours/24)%365, 'd')
	}
	return appendUnits(dst, hours/24/365, 'y', 0, 0)
}

// appendUnits appends n and its unit, then m and its unit unless m is 0.
func appendUnits(dst []byte, n int, unit byte, m int, minor byte) []byte {
	dst = append(strconv.AppendInt(dst, int64(n), 10), unit)
	if m == 0 {
		return dst
	}
	return append(strconv.AppendInt(dst, int64(m), 10), minor)
}
