package jsonyaml

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/apictl/apictl/pkg/jsonscan"
)

// Hand-written, where Convert would do, because a YAML LIST converts every item and Convert is its
// cost: it decodes each item into maps and go.yaml.in/yaml/v2 marshals them by reflection, about
// 130 µs an item at 100,000 custom objects, half of it the garbage collection its allocations cause
// against a large watch cache (BenchmarkAppendItem). AppendItem writes the YAML straight from the
// item's JSON, without allocating, for the JSON whose YAML it can be sure of; for the rest it says
// no and the caller converts. The rules are go.yaml.in/yaml/v2 v2.4.4's (encode.go's stringv,
// floatv and mapv, sorter.go's keyList.Less, resolve.go's resolve, emitterc.go's scalar analysis
// and styles, at its width of 80), and FuzzAppendItem holds them to Convert.

// maxDepth bounds the nesting AppendItem writes; deeper items are converted.
const maxDepth = 64

// bestWidth is the column past which the YAML emitter folds a scalar at a space.
const bestWidth = 80

// maxSimpleKey is the longest key the emitter writes as a simple key ("key: value").
const maxSimpleKey = 128

// Writer writes list items as YAML; its zero value is ready. It keeps the members it sorts between
// items, so that a list reuses them; a Writer is not safe for concurrent use.
type Writer struct {
	members [][]member
}

type member struct{ key, val []byte }

// AppendItem appends to dst the YAML of item, a JSON object or array, as an element of a top-level
// list (what follows "items:\n" in Convert's YAML of {"items":[item]}), and reports whether it
// could. When it could not, dst is returned as it was, and the caller converts.
func (w *Writer) AppendItem(dst, item []byte) ([]byte, bool) {
	out, ok := w.element(dst, item, 0, 0)
	if !ok {
		return dst, false
	}
	return out, true
}

// element writes a sequence element at indent: "- " and the value, nested collections inline.
func (w *Writer) element(dst, val []byte, indent, depth int) ([]byte, bool) {
	dst = appendSpaces(dst, indent)
	dst = append(dst, "- "...)
	return w.value(dst, val, indent+2, indent+2, depth, true)
}

// value writes val, which starts at column col. A collection's entries go at indent; inline says
// the first entry continues the current line (after "- ").
func (w *Writer) value(dst, val []byte, col, indent, depth int, inline bool) ([]byte, bool) {
	if len(val) == 0 || depth > maxDepth {
		return dst, false
	}
	switch val[0] {
	case '{':
		return w.mapping(dst, val, indent, depth, inline)
	case '[':
		return w.sequence(dst, val, indent, depth, inline)
	}
	dst, ok := appendScalar(dst, val, col)
	if !ok {
		return dst, false
	}
	return append(dst, '\n'), true
}

// mapping writes a JSON object as a block mapping, its keys sorted as the YAML encoder sorts them.
func (w *Writer) mapping(dst, obj []byte, indent, depth int, inline bool) ([]byte, bool) {
	for len(w.members) <= depth {
		w.members = append(w.members, nil)
	}
	ms := w.members[depth][:0]
	ok := jsonscan.WalkObject(obj, func(key, val []byte) bool {
		ms = append(ms, member{key, val})
		return true
	})
	w.members[depth] = ms
	if !ok {
		return dst, false
	}
	if len(ms) == 0 {
		return append(dst, "{}\n"...), true
	}
	if !strictOrder(ms) {
		return dst, false
	}
	slices.SortFunc(ms, func(a, b member) int {
		switch {
		case keyLess(a.key, b.key):
			return -1
		case keyLess(b.key, a.key):
			return 1
		}
		return 0
	})
	for i, m := range ms {
		if i > 0 && bytes.Equal(ms[i-1].key, m.key) {
			return dst, false // a repeated name: decoding keeps the last, the YAML has one
		}
		if i > 0 || !inline {
			dst = appendSpaces(dst, indent)
		}
		start := len(dst)
		if len(m.key) > maxSimpleKey || !isASCIIPrintable(m.key) || zeroLedRun(m.key) {
			return dst, false
		}
		dst, ok = appendString(dst, m.key, 0, true)
		if !ok {
			return dst, false
		}
		col := indent + len(dst) - start
		dst = append(dst, ':')
		switch v := m.val; {
		case len(v) > 0 && (v[0] == '{' || v[0] == '[') && !emptyCollection(v):
			dst = append(dst, '\n')
			nested := indent + 2
			if v[0] == '[' {
				nested = indent // a sequence in a mapping is not indented
			}
			if dst, ok = w.value(dst, v, nested, nested, depth+1, false); !ok {
				return dst, false
			}
		default:
			dst = append(dst, ' ')
			if dst, ok = w.value(dst, v, col+2, indent+2, depth+1, false); !ok {
				return dst, false
			}
		}
	}
	return dst, true
}

// sequence writes a JSON array as a block sequence at indent.
func (w *Writer) sequence(dst, arr []byte, indent, depth int, inline bool) ([]byte, bool) {
	if emptyCollection(arr) {
		return append(dst, "[]\n"...), true
	}
	first, ok := true, true
	walked := jsonscan.WalkArray(arr, func(el []byte) bool {
		if first && inline {
			dst = append(dst, "- "...)
			dst, ok = w.value(dst, el, indent+2, indent+2, depth+1, true)
		} else {
			dst, ok = w.element(dst, el, indent, depth+1)
		}
		first = false
		return ok
	})
	return dst, walked && ok
}

// emptyCollection reports whether v is {} or [], which the emitter writes in flow style.
func emptyCollection(v []byte) bool {
	i := 1
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i < len(v) && (v[i] == '}' || v[i] == ']')
}

// appendScalar writes a JSON string, number, boolean or null starting at column col.
func appendScalar(dst, v []byte, col int) ([]byte, bool) {
	switch v[0] {
	case '"':
		if len(v) < 2 || v[len(v)-1] != '"' {
			return dst, false
		}
		s := v[1 : len(v)-1]
		if bytes.IndexByte(s, '\\') >= 0 || !isASCIIPrintable(s) {
			return dst, false
		}
		return appendString(dst, s, col, false)
	case 't':
		return append(dst, "true"...), string(v) == "true"
	case 'f':
		return append(dst, "false"...), string(v) == "false"
	case 'n':
		return append(dst, "null"...), string(v) == "null"
	}
	return appendNumber(dst, v)
}

// appendNumber writes a JSON number as the YAML encoder writes the value yamlNumber gives it.
func appendNumber(dst, v []byte) ([]byte, bool) {
	if isSmallInt(v) {
		if string(v) == "-0" {
			return append(dst, '0'), true
		}
		return append(dst, v...), true
	}
	n, err := yamlNumber(string(v))
	if err != nil {
		return dst, false
	}
	switch n := n.(type) {
	case int:
		return strconv.AppendInt(dst, int64(n), 10), true
	case int64:
		return strconv.AppendInt(dst, n, 10), true
	case uint64:
		return strconv.AppendUint(dst, n, 10), true
	case float64:
		s := strconv.FormatFloat(n, 'g', -1, 64)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return append(dst, s...), true
	}
	return dst, false
}

// isSmallInt reports whether v is a JSON integer that fits an int64 as it is written.
func isSmallInt(v []byte) bool {
	digits := v
	if len(v) > 0 && v[0] == '-' {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// appendString writes s, printable ASCII, in the style the YAML encoder picks: plain unless the plain
// text would read as another type (double quotes) or the emitter may not write it plain (single
// quotes). A string with a space that might reach past bestWidth is declined: the emitter folds it.
func appendString(dst, s []byte, col int, key bool) ([]byte, bool) {
	quoted := 0
	style := byte(0) // plain
	if !resolvesToString(s) || isBase60Float(s) {
		style = '"'
		if bytes.IndexByte(s, '"') >= 0 {
			return dst, false // escaped in double quotes: left to Convert
		}
		quoted = 2
	} else if !plainAllowed(s) {
		style = '\''
		quoted = 2 + bytes.Count(s, []byte{'\''})
	}
	if !key && bytes.IndexByte(s, ' ') >= 0 && col+len(s)+quoted > bestWidth {
		return dst, false
	}
	switch style {
	case '"':
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), true
	case '\'':
		dst = append(dst, '\'')
		for _, c := range s {
			if c == '\'' {
				dst = append(dst, '\'')
			}
			dst = append(dst, c)
		}
		return append(dst, '\''), true
	}
	return append(dst, s...), true
}

// plainAllowed is the emitter's block_plain_allowed for printable ASCII on one line
// (yaml_emitter_analyze_scalar).
func plainAllowed(s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if len(s) >= 3 && (string(s[:3]) == "---" || string(s[:3]) == "...") {
		return false
	}
	for i, c := range s {
		followedBySpace := i+1 >= len(s) || s[i+1] == ' '
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				return false
			case '?', ':', '-':
				if followedBySpace {
					return false
				}
			}
			continue
		}
		switch c {
		case ':':
			if followedBySpace {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}

func isASCIIPrintable(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// resolvesToString is resolve's answer for a plain scalar with no tag: whether YAML reads s back
// as a string rather than a bool, null, number or timestamp.
func resolvesToString(s []byte) bool {
	if len(s) == 0 {
		return false // null
	}
	switch c := s[0]; {
	case c == '.':
		if resolveWords[string(s)] {
			return false
		}
		// ParseFloat reads nothing that starts with a dot and has no digit ("." is a managed
		// field's key in every object).
		if !bytes.ContainsAny(s, "0123456789") {
			return true
		}
		_, err := strconv.ParseFloat(transient(s), 64)
		return err != nil
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !resolvesToNumberOrTime(s)
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !resolveWords[string(s)]
	}
	return true
}

// resolveWords are resolve.go's resolveMap: the plain scalars that are not strings by their spelling.
var resolveWords = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true,
	"on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"false": true, "False": true, "FALSE": true,
	"off": true, "Off": true, "OFF": true,
	"~": true, "null": true, "Null": true, "NULL": true,
	".nan": true, ".NaN": true, ".NAN": true,
	".inf": true, ".Inf": true, ".INF": true,
	"+.inf": true, "+.Inf": true, "+.INF": true,
	"-.inf": true, "-.Inf": true, "-.INF": true,
}

// resolvesToNumberOrTime is resolve's 'D' and 'S' case: a timestamp, an int in any base Go's
// ParseInt reads, a float, or a binary int. strconv is asked only about what might be one, since its
// errors allocate and most strings here (UIDs) are none.
func resolvesToNumberOrTime(b []byte) bool {
	if resolveWords[string(b)] || isTimestamp(b) {
		return true
	}
	plain := transient(b)
	if bytes.IndexByte(b, '_') >= 0 {
		plain = strings.ReplaceAll(plain, "_", "")
	}
	if mayBeInt(plain) {
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return true
		}
	}
	if yamlFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		_, err := strconv.ParseUint(rest, 2, 64)
		return err == nil
	}
	if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		_, err := strconv.ParseInt("-"+rest, 2, 64)
		return err == nil
	}
	return false
}

// transient is b as a string for a call that does not keep it: strconv's and time's parsers, whose
// errors hold their input but are dropped here. Converting would allocate for every timestamp and
// resourceVersion of every item; b is not written while the string is in use.
func transient(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// mayBeInt is false for what ParseInt and ParseUint, base 0, certainly refuse: after a sign, a base
// prefix or only digits.
func mayBeInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) >= 2 && s[0] == '0' && strings.IndexByte("xXoObB", s[1]) >= 0 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp is resolve.go's parseTimestamp: four digits and a dash, then one of its formats.
func isTimestamp(b []byte) bool {
	s := transient(b)
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range timestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}

var base60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// isBase60Float is encode.go's: YAML 1.1's sexagesimal numbers, which the encoder quotes.
func isBase60Float(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	c := s[0]
	if !(c == '+' || c == '-' || c >= '0' && c <= '9') || bytes.IndexByte(s, ':') < 0 {
		return false
	}
	return base60Float.Match(s)
}

// keyLess is sorter.go's keyList.Less for two string keys of printable ASCII: letters before
// other characters, runs of digits compared as numbers.
func keyLess(a, b []byte) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for bi = i; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

// strictOrder reports whether keyList.Less orders these keys strictly. It compares runs of digits as
// numbers, except where the first difference is a digit in one key and a letter in the other inside
// a run ("a10", "a1x"): there the digit comes first, so "a10" < "a1x" < "a9" < "a10", and sort.Sort's
// result depends on the random order the encoder met the map's keys in. That needs a key with a
// letter after a digit and a key with two digits in a row; a mapping with both is left to Convert.
func strictOrder(ms []member) bool {
	letterAfterDigit, digitAfterDigit := false, false
	for _, m := range ms {
		for i := 1; i < len(m.key); i++ {
			if isDigit(m.key[i-1]) {
				letterAfterDigit = letterAfterDigit || isLetter(m.key[i])
				digitAfterDigit = digitAfterDigit || isDigit(m.key[i])
			}
		}
	}
	return !letterAfterDigit || !digitAfterDigit
}

// zeroLedRun reports whether key has a run of digits that starts with a zero, such as "007": among
// such keys keyList.Less is not a strict order, so sort.Sort's result depends on the order the
// encoder met the map's keys in, which is random. Such a mapping is left to Convert.
func zeroLedRun(key []byte) bool {
	for i := 0; i+1 < len(key); i++ {
		if key[i] == '0' && isDigit(key[i+1]) && (i == 0 || !isDigit(key[i-1])) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func appendSpaces(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, ' ')
	}
	return dst
}
