package handlers

import "bytes"

// jsonIndenter indents compact JSON as encoding/json's Indent(dst, src, "", "  ") does, but over a
// stream: the input may be cut anywhere (inside a string, between a bracket and what closes it), and
// each piece is indented as it comes, so that an indented LIST streams in chunks as a compact one
// does instead of being built whole (issue 38). Its output for a whole document is Indent's, byte for
// byte (TestJSONIndenterMatchesIndent); it expects valid JSON, as the list writer makes.
//
// Hand-written because Indent has no streaming form and json.Encoder.SetIndent needs the value
// decoded: indenting bytes already encoded is the cheap way (BenchmarkJSONIndenter).
type jsonIndenter struct {
	depth    int
	inString bool
	escaped  bool
	// open is set after '{' or '[' until the next significant byte says whether the value is
	// empty ("{}") or gets a new line.
	open bool
}

// write appends src, indented, to dst.
func (in *jsonIndenter) write(dst *bytes.Buffer, src []byte) {
	start := 0 // src[start:i] are bytes to copy unchanged: runs inside strings and of scalars
	for i := 0; i < len(src); i++ {
		c := src[i]
		if in.inString {
			switch {
			case in.escaped:
				in.escaped = false
			case c == '\\':
				in.escaped = true
			case c == '"':
				in.inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			dst.Write(src[start:i])
			start = i + 1
			continue
		}
		if in.open {
			in.open = false
			if c == '}' || c == ']' {
				in.depth--
				continue // copied with the run that follows
			}
			in.newline(dst)
		}
		switch c {
		case '"':
			in.inString = true
		case '{', '[':
			dst.Write(src[start : i+1])
			start = i + 1
			in.depth++
			in.open = true
		case '}', ']':
			dst.Write(src[start:i])
			start = i
			in.depth--
			in.newline(dst)
		case ',':
			dst.Write(src[start : i+1])
			start = i + 1
			in.newline(dst)
		case ':':
			dst.Write(src[start : i+1])
			start = i + 1
			dst.WriteByte(' ')
		}
	}
	dst.Write(src[start:])
}

func (in *jsonIndenter) newline(dst *bytes.Buffer) {
	dst.WriteByte('\n')
	for range in.depth {
		dst.WriteString("  ")
	}
}
