package flags

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Section names, in the order `apictl serve --help` prints them. This is kube-apiserver's order from
// the days when it still served insecurely (1.19), minus the sections apictl does not have.
const (
	SectionGeneric         = "generic"
	SectionEtcd            = "etcd"
	SectionSecureServing   = "secure serving"
	SectionInsecureServing = "insecure serving"
	SectionFeatures        = "features"
	SectionAuthentication  = "authentication"
	SectionAuthorization   = "authorization"
	SectionAPIEnablement   = "API enablement"
	SectionLogs            = "logs"
	// SectionGlobal holds the flags that say where configuration comes from, not what it is.
	SectionGlobal = "global"
)

// NamedFlagSets is an ordered collection of flag sets, one per help section. Sections appear in the
// order of the first call to FlagSet for each name.
type NamedFlagSets struct {
	Order    []string
	FlagSets map[string]*pflag.FlagSet
}

// FlagSet returns the set for name, creating it on first use.
func (n *NamedFlagSets) FlagSet(name string) *pflag.FlagSet {
	if n.FlagSets == nil {
		n.FlagSets = map[string]*pflag.FlagSet{}
	}
	if fs, ok := n.FlagSets[name]; ok {
		return fs
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	n.FlagSets[name] = fs
	n.Order = append(n.Order, name)
	return fs
}

// SectionOf returns the section a flag belongs to, or "" when no section has it.
func (n *NamedFlagSets) SectionOf(flag string) string {
	for _, name := range n.Order {
		if n.FlagSets[name].Lookup(flag) != nil {
			return name
		}
	}
	return ""
}

// Header is a section's help heading: "Generic flags:", "API enablement flags:".
func Header(section string) string {
	return strings.ToUpper(section[:1]) + section[1:] + " flags:"
}

// PrintSections writes each non-empty section under its heading, wrapping descriptions at cols
// (0 means no wrapping).
func (n *NamedFlagSets) PrintSections(w io.Writer, cols int) error {
	var b bytes.Buffer
	for _, name := range n.Order {
		fs := n.FlagSets[name]
		if !fs.HasFlags() {
			continue
		}
		fmt.Fprintf(&b, "\n%s\n\n%s", Header(name), fs.FlagUsagesWrapped(cols))
	}
	_, err := w.Write(b.Bytes())
	return err
}
