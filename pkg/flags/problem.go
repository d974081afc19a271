package flags

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Problem is one finding of validation: the section and flag it concerns, the offending value, and
// what is wrong together with how to fix it. It is an error so sections can return it from Validate.
type Problem struct {
	Section string `json:"section"`
	Flag    string `json:"flag"`
	Value   string `json:"value"`
	Message string `json:"problem"`
}

// Error reads like etcd's and kube's flag errors: `--secure-port 70000 must be between 0 and 65535`.
func (p *Problem) Error() string {
	if p.Flag == "" {
		return p.Message
	}
	if p.Value == "" {
		return fmt.Sprintf("--%s %s", p.Flag, p.Message)
	}
	return fmt.Sprintf("--%s %s %s", p.Flag, displayValue(p.Value), p.Message)
}

func problemf(section, flag, value, format string, args ...any) *Problem {
	return &Problem{Section: section, Flag: flag, Value: value, Message: fmt.Sprintf(format, args...)}
}

// displayValue quotes a value only when it could be misread unquoted.
func displayValue(v string) string {
	if strings.ContainsAny(v, " \t\n\"'") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// Problems extracts the Problems of errs, wrapping any other error as a problem of the given section.
func Problems(section string, errs []error) []*Problem {
	out := make([]*Problem, 0, len(errs))
	for _, err := range errs {
		var p *Problem
		if errors.As(err, &p) {
			out = append(out, p)
			continue
		}
		out = append(out, &Problem{Section: section, Message: err.Error()})
	}
	return out
}

// sortProblems orders problems found by walking a map, so that output is stable.
func sortProblems(errs []error) {
	sort.SliceStable(errs, func(i, j int) bool {
		pi, pj := errs[i].(*Problem), errs[j].(*Problem)
		if pi.Flag != pj.Flag {
			return pi.Flag < pj.Flag
		}
		return pi.Value < pj.Value
	})
}

// problemList collects the problems a section finds; add ignores nil so checks can be chained.
type problemList []error

func (l *problemList) add(p *Problem) {
	if p != nil {
		*l = append(*l, p)
	}
}
