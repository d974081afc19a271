// Ported from k8s.io/kubernetes v1.37.2 pkg/apis/admissionregistration/validation/validation.go
// (the CEL compilation of its expressions).

package admissionregistration

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// celCompilers compile the CEL expressions of webhooks and policies the way kube's validation
// does, with k8s.io/apiserver's admission CEL environments. The base environment takes a while to
// build, so it is built on first use and then shared by the rules that hold it.
type celCompilers struct {
	once      sync.Once
	base      *environment.EnvSet
	stateless plugincel.Compiler
}

func newCELCompilers() *celCompilers { return &celCompilers{} }

func (c *celCompilers) init() {
	c.once.Do(func() {
		c.base = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
		c.stateless = plugincel.NewCompiler(c.base)
	})
}

// strict is kube's stateless compiler, for expressions that cannot use variables.
func (c *celCompilers) strict() plugincel.Compiler {
	c.init()
	return c.stateless
}

// compiler returns a compiler for one policy: with variables it must be a composited compiler
// (which remembers each variable compiled, so later expressions may use it), a new one per policy.
func (c *celCompilers) compiler(composition bool) plugincel.Compiler {
	c.init()
	if !composition {
		return c.stateless
	}
	compiler, err := plugincel.NewCompositedCompiler(c.base)
	if err != nil {
		// The base environment was built above; kube falls back the same way.
		return c.stateless
	}
	return compiler
}

// envType is the environment an expression compiles in: an expression the stored object already
// had keeps compiling with the stored-expressions environment, so that an update does not fail on
// what an older server accepted.
func envType(preexisting sets.Set[string], expression string) environment.Type {
	if preexisting.Has(expression) {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

// compileErr turns a compilation error into kube's field error: Required, Invalid with the
// expression as value, or internal.
func compileErr(fld *field.Path, expression string, err error) *field.Error {
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(fld, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(fld, expression, celErr.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(fld, celErr)
		}
	}
	return field.InternalError(fld, fmt.Errorf("unsupported error type: %w", err))
}

// compile compiles one expression and reports kube's field error, if any.
func compile(compiler plugincel.Compiler, accessor plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations,
	env environment.Type, fld *field.Path) field.ErrorList {
	result := compiler.CompileCELExpression(accessor, decls, env)
	if result.Error != nil {
		return field.ErrorList{compileErr(fld, accessor.GetExpression(), result.Error)}
	}
	return nil
}

// matchConditionOptions say what a list of match conditions may refer to.
type matchConditionOptions struct {
	allowParams bool
	preexisting sets.Set[string]
}

// validateMatchConditions: at most 64, unique qualified names, expressions that compile to bool
// with the stateless compiler.
func (c *celCompilers) validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, opts matchConditionOptions, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conditions) > 64 {
		errs = append(errs, field.TooMany(fld, len(conditions), 64))
	}
	names := sets.New[string]()
	for i, mc := range conditions {
		f := fld.Index(i)
		if expr := strings.TrimSpace(mc.Expression); expr == "" {
			errs = append(errs, field.Required(f.Child("expression"), ""))
		} else {
			errs = append(errs, compile(c.strict(), &matchconditions.MatchCondition{Expression: expr},
				plugincel.OptionalVariableDeclarations{HasParams: opts.allowParams, HasAuthorizer: true},
				envType(opts.preexisting, expr), f.Child("expression"))...)
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(f.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(mc.Name, f.Child("name"))...)
		}
		if mc.Name != "" {
			if names.Has(mc.Name) {
				errs = append(errs, field.Duplicate(f.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
	}
	return errs
}

// validateQualifiedName is kube's core ValidateQualifiedName: a label key such as example.com/name.
func validateQualifiedName(value string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(fld, value, msg))
	}
	return errs
}

var (
	celIdentifier = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
)

// isCELIdentifier: a variable's name must be usable as variables.<name>.
func isCELIdentifier(name string) bool {
	return celIdentifier.MatchString(name) && !celReserved.Has(name)
}
