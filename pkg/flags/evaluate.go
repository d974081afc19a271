package flags

import (
	"strings"

	"github.com/spf13/pflag"
)

// Evaluation is everything `apictl flags validate` and `apictl serve` learn about a configuration:
// where each value came from, what is wrong, and what is allowed but suspicious.
type Evaluation struct {
	Sources  Sources
	Errors   []*Problem
	Warnings []*Problem
}

// Valid reports whether the configuration can be served.
func (e Evaluation) Valid() bool { return len(e.Errors) == 0 }

// Evaluate is the one path from command line to checked options that `serve` and `flags validate`
// share: merge the environment and config file into fs, complete o, validate it. It never stops at
// the first problem.
func Evaluate(o *ServerOptions, fss *NamedFlagSets, fs *pflag.FlagSet) Evaluation {
	sources, problems, warnings := Merge(fss, fs)
	e := Evaluation{Sources: sources, Errors: problems, Warnings: warnings}
	o.sources = sources
	if err := o.Complete(); err != nil {
		e.Errors = append(e.Errors, &Problem{Section: SectionGeneric, Message: err.Error()})
	}
	e.Errors = append(e.Errors, Problems(SectionGeneric, o.Validate())...)
	e.Warnings = append(e.Warnings, o.Warnings()...)
	return e
}

// Setting is one flag's effective value and its source, as `apictl flags show` prints it.
type Setting struct {
	Section string `json:"section"`
	Flag    string `json:"flag"`
	Value   string `json:"value"`
	Source  Source `json:"source"`
}

// Settings lists every flag's effective value in help order.
func Settings(fss *NamedFlagSets, sources Sources) []Setting {
	var out []Setting
	for _, section := range fss.Order {
		fss.FlagSets[section].VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			src := sources[f.Name]
			if src == "" {
				src = SourceDefault
			}
			value := displayFlagValue(f.Value)
			if _, secret := f.Annotations[secretAnnotation]; secret && value != "" {
				value = "<redacted>"
			}
			out = append(out, Setting{Section: section, Flag: f.Name, Value: value, Source: src})
		})
	}
	return out
}

// FlagInfo describes one flag for `apictl flags list`.
type FlagInfo struct {
	Section     string `json:"section"`
	Flag        string `json:"flag"`
	Shorthand   string `json:"shorthand,omitempty"`
	Type        string `json:"type"`
	Default     string `json:"default"`
	Env         string `json:"env"`
	Description string `json:"description"`
}

// Describe lists every flag in help order.
func Describe(fss *NamedFlagSets) []FlagInfo {
	var out []FlagInfo
	for _, section := range fss.Order {
		fss.FlagSets[section].VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			out = append(out, FlagInfo{
				Section:     section,
				Flag:        f.Name,
				Shorthand:   f.Shorthand,
				Type:        f.Value.Type(),
				Default:     unbracket(f.Value, f.DefValue),
				Env:         EnvName(f.Name),
				Description: f.Usage,
			})
		})
	}
	return out
}

// secretAnnotation marks a flag whose value is a credential: `apictl flags show` prints it as
// <redacted>, so that a pasted report leaks nothing.
const secretAnnotation = "apictl.io/secret"

// displayFlagValue shows list values without pflag's brackets, the way they are typed.
func displayFlagValue(v pflag.Value) string { return unbracket(v, v.String()) }

func unbracket(v pflag.Value, s string) string {
	if _, ok := v.(pflag.SliceValue); ok {
		return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	return s
}
