package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, tt := range []struct{ got, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nc\n", "a\nb\n", "line 2:\ngot:  \"c\"\nwant: \"b\""},
		{"a\n", "a\nb\n", "line 2:\ngot:  \"\"\nwant: \"b\""},
		{"a", "a\nb", "line 2: got end of output, want \"b\""},
		{"a\nb", "a", "line 2: got \"b\", want end of file"},
	} {
		if diff := firstDiff(tt.got, tt.want); diff != tt.diff {
			t.Errorf("firstDiff(%q, %q) = %q, want %q", tt.got, tt.want, diff, tt.diff)
		}
	}
}
