package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPredicatesSeeThroughWrapping(t *testing.T) {
	predicates := map[ErrorCode]func(error) bool{
		NotFound:                IsNotFound,
		AlreadyExists:           IsAlreadyExists,
		Conflict:                IsConflict,
		Expired:                 IsExpired,
		TooLargeResourceVersion: IsTooLargeResourceVersion,
		InvalidContinue:         IsInvalidContinue,
		Invalid:                 IsInvalid,
		Unavailable:             IsUnavailable,
		TooSlow:                 IsTooSlow,
		RequestTooLarge:         IsRequestTooLarge,
	}
	for code := range predicates {
		err := fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", &StorageError{Code: code, Key: "k"}))
		for other, is := range predicates {
			if got, want := is(err), other == code; got != want {
				t.Errorf("predicate for %s on a wrapped %s error = %v, want %v", other, code, got, want)
			}
		}
		if got := CodeOf(err); got != code {
			t.Errorf("CodeOf = %s, want %s", got, code)
		}
	}
	if CodeOf(errors.New("plain")) != 0 || IsNotFound(nil) {
		t.Error("an error without a StorageError has a code")
	}
}

func TestUnwrapReachesTheCause(t *testing.T) {
	err := &StorageError{Code: Unavailable, Err: fmt.Errorf("etcd at x did not answer: %w", context.DeadlineExceeded)}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("errors.Is does not reach the cause: the handlers cannot tell 504 from 503")
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  *StorageError
		want string
	}{
		{&StorageError{Code: NotFound, Key: "configmaps/a/b"}, `key "configmaps/a/b" not found`},
		{&StorageError{Code: AlreadyExists, Key: "configmaps/a/b"}, `key "configmaps/a/b" already exists`},
		{&StorageError{Code: Conflict, Key: "k", ResourceVersion: 5, CurrentRevision: 7}, `key "k" has been modified: the request was for resourceVersion 5, the current one is 7`},
		{&StorageError{Code: TooLargeResourceVersion, ResourceVersion: 90, CurrentRevision: 12}, "Too large resource version: 90, current: 12"},
		{&StorageError{Code: Expired, Op: "list", Continue: "abc"}, msgContinueExpired},
		{&StorageError{Code: Expired, Op: "list"}, msgListExpired},
		{&StorageError{Code: Expired, Op: "watch"}, msgWatchExpired},
		{&StorageError{Code: Unavailable, Err: errors.New("etcd at x is unavailable: boom")}, "etcd at x is unavailable: boom"},
		{&StorageError{Code: Invalid, Key: "k"}, `storage Invalid error on key "k"`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: Error() = %q, want %q", tt.err.Code, got, tt.want)
		}
	}
	if got := ErrorCode(99).String(); !strings.Contains(got, "99") {
		t.Errorf("unknown code prints as %q", got)
	}
}
