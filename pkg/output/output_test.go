package output

import (
	"bytes"
	"testing"
)

func TestWriteTable(t *testing.T) {
	tbl := Table{
		Title:  "Generic flags",
		Header: []string{"FLAG", "DEFAULT"},
		Rows:   [][]string{{"--advertise-address", ""}, {"--max-requests-inflight", "400"}},
	}
	tests := []struct {
		name     string
		terminal bool
		want     string
	}{
		{name: "terminal", terminal: true, want: "Generic flags\n" +
			"FLAG                      DEFAULT\n" +
			"--advertise-address\n" +
			"--max-requests-inflight   400\n"},
		{name: "pipe", terminal: false, want: "--advertise-address\t\n--max-requests-inflight\t400\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, tbl, tt.terminal); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestWriteMarkdownEscapes(t *testing.T) {
	var b bytes.Buffer
	err := WriteMarkdown(&b, Table{Header: []string{"A", "B"}, Rows: [][]string{{"x|y", "1\n2"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "| A | B |\n| --- | --- |\n| x\\|y | 1<br>2 |\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("json", FormatTable, FormatJSON); err != nil || f != FormatJSON {
		t.Errorf("ParseFormat(json) = %v, %v", f, err)
	}
	_, err := ParseFormat("xml", FormatTable, FormatJSON)
	if err == nil || err.Error() != `unknown output format "xml": use one of table, json` {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
}
