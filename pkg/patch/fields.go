package patch

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// Update records a create or an update (POST, PUT) of t in obj's metadata.managedFields: the
// fields that differ from live become owned by manager, with operation Update and obj's
// apiVersion; fields nobody sets any more lose their owners. live is the stored object, or nil for
// a create. manager is the request's fieldManager, or the default Manager derives from the
// User-Agent. obj's managedFields are set in place and obj is returned, ready for the registry's
// rules; live is not modified. Objects from Patch already carry their ownership: they do not go
// through Update again.
//
// Like kube, a write never fails because of its field ownership: if the managed fields cannot be
// computed (an object that does not fit its schema, which validation will reject anyway), obj
// keeps live's managed fields. The error is only for a target or an object of the wrong type,
// which are handler bugs, and for machinery that could not be built (see New).
func (p *Patcher) Update(t Target, live, obj runtime.Object, manager string) (runtime.Object, error) {
	tg, err := p.target(t)
	if err != nil {
		return nil, err
	}
	if err := tg.check(obj, "the new"); err != nil {
		return nil, internalError(err)
	}
	if live != nil {
		if err := tg.check(live, "the stored"); err != nil {
			return nil, internalError(err)
		}
	}
	own, err := tg.ownershipOf()
	if err != nil {
		return nil, err
	}
	return own.track(live, obj, manager), nil
}

// Manager is the field manager of a write: the fieldManager the client sent, or else the
// User-Agent up to its first "/" (kubectl/v1.33.0 (linux/amd64) ... gives kubectl) without
// unprintable characters, cut to the 128 bytes a fieldManager may have, as kube derives it.
func Manager(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
