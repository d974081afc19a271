package flags

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/apictl/apictl/internal/typo"
)

const (
	// EnvPrefix starts every environment variable apictl reads: APICTL_SECURE_PORT for --secure-port.
	EnvPrefix = "APICTL"
	// ConfigFlag names the flag (and APICTL_CONFIG the variable) that points at the config file.
	ConfigFlag = "config"
)

// Source says where a flag's effective value came from.
type Source string

// Sources, from weakest to strongest.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "config file"
	SourceEnv     Source = "environment"
	SourceFlag    Source = "flag"
)

// EnvName returns the environment variable that sets a flag: dashes become underscores.
func EnvName(flag string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Sources records where every flag's value came from.
type Sources map[string]Source

// Merge fills the flags the command line left unset from the environment and then the config file,
// so that the precedence is flag > environment > file > default and defaults survive. It records every
// flag's source and reports every unknown config key and bad value at once. Unknown APICTL_*
// variables are returned as warnings, since they are often typos.
func Merge(fss *NamedFlagSets, fs *pflag.FlagSet) (Sources, []*Problem, []*Problem) {
	var problems, warnings []*Problem
	sources := Sources{}
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()

	configFile := ""
	if f := fs.Lookup(ConfigFlag); f != nil {
		configFile = f.Value.String()
		if !f.Changed {
			if env, ok := lookupEnv(EnvName(ConfigFlag)); ok {
				configFile = env
				_ = f.Value.Set(env)
			}
		}
	}
	fileKeys := map[string]bool{}
	if configFile != "" {
		v.SetConfigFile(configFile)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			problems = append(problems, problemf(SectionGlobal, ConfigFlag, configFile, "cannot be read as YAML: %v", unwrapPathError(err)))
		} else {
			problems = append(problems, checkFileKeys(v, fs, fileKeys)...)
		}
	}

	fs.VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Name == "help":
			return
		case f.Changed:
			sources[f.Name] = SourceFlag
			return
		case f.Name == ConfigFlag:
			sources[f.Name] = SourceDefault
			if _, ok := lookupEnv(EnvName(ConfigFlag)); ok {
				sources[f.Name] = SourceEnv
			}
			return
		}
		source, origin := SourceDefault, ""
		if _, ok := lookupEnv(EnvName(f.Name)); ok {
			source, origin = SourceEnv, "environment variable "+EnvName(f.Name)
		} else if fileKeys[f.Name] {
			source, origin = SourceFile, fmt.Sprintf("config file %s, key %q", configFile, f.Name)
		}
		sources[f.Name] = source
		if source == SourceDefault {
			return
		}
		value, err := configValue(v.Get(f.Name))
		if err == nil {
			err = f.Value.Set(value)
		}
		if err != nil {
			problems = append(problems, &Problem{Section: sectionOr(fss, f.Name), Flag: f.Name, Value: value,
				Message: fmt.Sprintf("from %s is invalid: %v", origin, err)})
		}
	})
	warnings = append(warnings, unknownEnv(fs)...)
	return sources, problems, warnings
}

// lookupEnv treats an empty variable as unset, as viper does.
func lookupEnv(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
}

// checkFileKeys reports keys that name no flag, with the nearest flag as a suggestion, and records the
// valid ones.
func checkFileKeys(v *viper.Viper, fs *pflag.FlagSet, valid map[string]bool) []*Problem {
	var problems []*Problem
	keys := make([]string, 0)
	for key := range v.AllSettings() {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f := fs.Lookup(key)
		switch {
		case key == ConfigFlag:
			problems = append(problems, problemf(SectionGlobal, ConfigFlag, v.ConfigFileUsed(),
				"sets the key %q: a config file cannot name another config file; remove the key", key))
		case f == nil || key == "help":
			msg := fmt.Sprintf("has an unknown key %q", key)
			if s := suggest(key, fs); s != "" {
				msg += fmt.Sprintf(": did you mean %q?", s)
			} else {
				msg += ": keys are flag names without dashes, see `apictl flags list`"
			}
			problems = append(problems, problemf(SectionGlobal, ConfigFlag, v.ConfigFileUsed(), "%s", msg))
		default:
			valid[key] = true
		}
	}
	return problems
}

// configValue turns a YAML value into the string a flag parses: lists join with commas.
func configValue(raw any) (string, error) {
	switch val := raw.(type) {
	case nil:
		return "", nil
	case []any:
		parts := make([]string, len(val))
		for i, item := range val {
			parts[i] = fmt.Sprint(item)
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		return "", fmt.Errorf("a map is not accepted here: write the pairs as one string, like \"WatchList=false,AllBeta=true\", or as a list of \"Name=value\" entries")
	default:
		return fmt.Sprint(val), nil
	}
}

// unknownEnv warns about APICTL_* variables that set no flag.
func unknownEnv(fs *pflag.FlagSet) []*Problem {
	known := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { known[EnvName(f.Name)] = true })
	var warnings []*Problem
	var names []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") && value != "" && !known[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix+"_"), "_", "-"))
		msg := fmt.Sprintf("environment variable %s sets no flag and is ignored", name)
		if s := suggest(flag, fs); s != "" {
			msg += fmt.Sprintf(": did you mean %s?", EnvName(s))
		}
		warnings = append(warnings, &Problem{Section: SectionGlobal, Flag: "", Message: msg})
	}
	return warnings
}

func sectionOr(fss *NamedFlagSets, flag string) string {
	if s := fss.SectionOf(flag); s != "" {
		return s
	}
	return SectionGlobal
}

// suggest returns the flag name nearest to key, if it is near enough to be a typo.
func suggest(key string, fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != ConfigFlag {
			names = append(names, f.Name)
		}
	})
	return typo.Nearest(key, names)
}
