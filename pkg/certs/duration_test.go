package certs

import (
	"testing"
	"time"
)

func TestParseAndFormatDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"1y", year, "1y"},
		{"10y", 10 * year, "10y"},
		{"30d", 30 * day, "30d"},
		{"365d", year, "1y"},
		{"8760h", year, "1y"},
		{"720h", 30 * day, "30d"},
		{"1h", time.Hour, "1h0m0s"},
		{"90m", 90 * time.Minute, "1h30m0s"},
		{"0", 0, "0s"},
		{"-1d", -day, "-1d"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if out := FormatDuration(got); out != tt.out {
			t.Errorf("FormatDuration(%v) = %q, want %q", got, out, tt.out)
		}
	}
	for _, bad := range []string{"", "1.5y", "y", "ten years", "1w", "300y"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestFormatResidualAndTime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		348*day + time.Hour:             "348d",
		9*year + 200*day:                "9y",
		23*time.Hour + 59*time.Minute:   "23h",
		59*time.Minute + 59*time.Second: "59m",
		30 * time.Second:                "30s",
		-3 * day:                        "-3d",
	} {
		if got := FormatResidual(d); got != want {
			t.Errorf("FormatResidual(%v) = %q, want %q", d, got, want)
		}
	}
	at := time.Date(2027, time.April, 9, 9, 17, 30, 0, time.FixedZone("CEST", 2*3600))
	if got := FormatTime(at); got != "Apr 09, 2027 07:17 UTC" {
		t.Errorf("FormatTime = %q", got)
	}
}
