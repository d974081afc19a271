package features

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		raw       map[string]string
		watchList bool
		errs      []string
	}{
		{name: "defaults", raw: nil, watchList: true},
		{name: "off", raw: map[string]string{"WatchList": "false"}, watchList: false},
		{name: "AllBeta off", raw: map[string]string{"AllBeta": "false"}, watchList: false},
		{name: "explicit beats AllBeta", raw: map[string]string{"AllBeta": "false", "WatchList": "true"}, watchList: true},
		{name: "missing value", raw: map[string]string{"WatchList": ""}, watchList: true,
			errs: []string{"missing bool value for WatchList"}},
		{name: "bad bool", raw: map[string]string{"WatchList": "maybe"}, watchList: true,
			errs: []string{`invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`}},
		{name: "locked", raw: map[string]string{"AggregatedDiscoveryEndpoint": "false"}, watchList: true,
			errs: []string{"cannot set feature gate AggregatedDiscoveryEndpoint to false, feature is locked to true"}},
		{name: "every unknown reported", raw: map[string]string{"Nope": "true", "Zap": "true"}, watchList: true,
			errs: []string{"unrecognized feature gate: Nope", "unrecognized feature gate: Zap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := Parse(tt.raw)
			if got := g.Enabled(WatchList); got != tt.watchList {
				t.Errorf("WatchList = %v, want %v", got, tt.watchList)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors = %v, want %d", errs, len(tt.errs))
			}
			for i, want := range tt.errs {
				if !strings.HasPrefix(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want prefix %q", i, errs[i], want)
				}
			}
		})
	}
}

func TestHelpHidesGA(t *testing.T) {
	help := fmt.Sprint(Help())
	if strings.Contains(help, AggregatedDiscoveryEndpoint) {
		t.Errorf("GA gate listed in help: %s", help)
	}
	if !strings.Contains(help, "WatchList=true|false (BETA - default=true)") {
		t.Errorf("WatchList missing from help: %s", help)
	}
}
