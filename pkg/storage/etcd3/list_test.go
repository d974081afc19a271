package etcd3

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/internal/storagetest"
)

// fill creates prefix+name for each name and returns the revision of the last write.
func fill(t *testing.T, s *Store, prefix string, names ...string) int64 {
	t.Helper()
	var rev int64
	for _, n := range names {
		kv, err := s.Create(context.Background(), prefix+n, []byte(n), 0)
		if err != nil {
			t.Fatal(err)
		}
		rev = kv.ModRevision
	}
	return rev
}

func keysOf(items []storage.KeyValue) []string {
	keys := make([]string, len(items))
	for i, kv := range items {
		keys[i] = kv.Key
	}
	return keys
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%03d", i)
	}
	return out
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// listAll pages through a list and checks the invariants every page must keep.
func listAll(t *testing.T, s *Store, prefix string, opts storage.ListOptions) (keys []string, pages int, revision int64) {
	t.Helper()
	ctx := testContext(t)
	for {
		page, err := s.List(ctx, prefix, opts)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		if revision == 0 {
			revision = page.Revision
		} else if page.Revision != revision {
			t.Fatalf("page %d read at revision %d, the first at %d", pages, page.Revision, revision)
		}
		if opts.Limit > 0 && page.Continue != "" && int64(len(page.Items)) != opts.Limit {
			t.Fatalf("page %d has %d items and a continue token: a short page while more exist", pages, len(page.Items))
		}
		keys = append(keys, keysOf(page.Items)...)
		if page.Continue == "" {
			if page.RemainingItemCount != nil {
				t.Errorf("the last page has remainingItemCount %d", *page.RemainingItemCount)
			}
			return keys, pages, revision
		}
		opts.Continue = page.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		if pages > 1000 {
			t.Fatal("more than 1000 pages")
		}
	}
}

func TestListPrefixBoundaries(t *testing.T) {
	s := newStore(t, nil, Config{})
	fill(t, s, "", "configmaps/a/x", "configmaps/ab/y", "configmaps/a/z", "configmapsx/a/w", "secrets/a/v")
	tests := []struct {
		prefix string
		want   []string
	}{
		{"configmaps/a/", []string{"configmaps/a/x", "configmaps/a/z"}},
		{"configmaps/a", []string{"configmaps/a/x", "configmaps/a/z"}}, // the missing "/" is added
		{"configmaps/", []string{"configmaps/a/x", "configmaps/a/z", "configmaps/ab/y"}},
		{"configmaps/b/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, _, _ := listAll(t, s, tt.prefix, storage.ListOptions{})
			if !slices.Equal(got, tt.want) {
				t.Errorf("keys = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestListPaging(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	all := prefixed("pods/ns/", names(10))
	fill(t, s, "", all...)
	for _, limit := range []int64{1, 3, 5, 10, 11} {
		t.Run("limit="+strconv.FormatInt(limit, 10), func(t *testing.T) {
			got, pages, _ := listAll(t, s, "pods/ns/", storage.ListOptions{Limit: limit})
			if !slices.Equal(got, all) {
				t.Errorf("keys = %q", got)
			}
			if want := (10 + int(limit) - 1) / int(limit); pages != want {
				t.Errorf("%d pages, want %d (no empty last page when the last page is exactly full)", pages, want)
			}
		})
	}
	first, err := s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if first.RemainingItemCount == nil || *first.RemainingItemCount != 6 {
		t.Errorf("remainingItemCount = %v, want 6", first.RemainingItemCount)
	}
	second, err := s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 4, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if second.RemainingItemCount == nil || *second.RemainingItemCount != 2 {
		t.Errorf("remainingItemCount of page 2 = %v, want 2", second.RemainingItemCount)
	}
}

// Every page of one list reads at the first page's revision, whatever is written meanwhile.
func TestListPagesShareOneRevision(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	fill(t, s, "pods/ns/", "a", "b", "c", "d")
	first, err := s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "pods/ns/", "bb", "e")
	if _, err := s.Delete(ctx, "pods/ns/d", nil); err != nil {
		t.Fatal(err)
	}
	rest, err := s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 10, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Revision != first.Revision {
		t.Errorf("page 2 read at %d, page 1 at %d", rest.Revision, first.Revision)
	}
	if got := keysOf(rest.Items); !slices.Equal(got, []string{"pods/ns/c", "pods/ns/d"}) {
		t.Errorf("page 2 = %q, want the state of page 1's revision", got)
	}
}

// A filter never leaves a page short while more matches exist, however sparse the matches.
func TestListFilterFillsPages(t *testing.T) {
	s := newStore(t, nil, Config{})
	all := prefixed("pods/ns/", names(100))
	fill(t, s, "", all...)
	var want []string
	for i, k := range all {
		if i%7 == 3 {
			want = append(want, k)
		}
	}
	filter := func(kv storage.KeyValue) (bool, error) {
		n, err := strconv.Atoi(strings.TrimPrefix(kv.Key, "pods/ns/n"))
		return n%7 == 3, err
	}
	for _, limit := range []int64{1, 2, 3, 14, 100} {
		t.Run("limit="+strconv.FormatInt(limit, 10), func(t *testing.T) {
			got, _, _ := listAll(t, s, "pods/ns/", storage.ListOptions{Limit: limit, Filter: filter})
			if !slices.Equal(got, want) {
				t.Errorf("keys = %q, want %q", got, want)
			}
		})
	}
	page, err := s.List(testContext(t), "pods/ns/", storage.ListOptions{Limit: 2, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	if page.RemainingItemCount != nil {
		t.Error("a filtered page has a remainingItemCount")
	}
	sentinel := errors.New("bad selector")
	_, err = s.List(testContext(t), "pods/ns/", storage.ListOptions{Filter: func(storage.KeyValue) (bool, error) { return false, sentinel }})
	if err != sentinel {
		t.Errorf("a failing filter: err = %v, want the sentinel itself", err)
	}
}

func TestListResourceVersions(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	revA := fill(t, s, "pods/ns/", "a")
	revB := fill(t, s, "pods/ns/", "b")
	revC := fill(t, s, "pods/ns/", "c")
	current, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	future := strconv.FormatInt(current+1000, 10)
	rv := func(n int64) string { return strconv.FormatInt(n, 10) }
	tests := []struct {
		name  string
		opts  storage.ListOptions
		want  []string // nil with code set
		exact int64    // the list's revision, when it is known
		code  storage.ErrorCode
	}{
		{name: "latest", opts: storage.ListOptions{}, want: []string{"a", "b", "c"}},
		{name: "any", opts: storage.ListOptions{ResourceVersion: "0"}, want: []string{"a", "b", "c"}},
		{name: "any, not older than", opts: storage.ListOptions{ResourceVersion: "0", ResourceVersionMatch: storage.MatchNotOlderThan}, want: []string{"a", "b", "c"}},
		{name: "not older than, no limit", opts: storage.ListOptions{ResourceVersion: rv(revA)}, want: []string{"a", "b", "c"}},
		{name: "not older than, explicit", opts: storage.ListOptions{ResourceVersion: rv(revB), ResourceVersionMatch: storage.MatchNotOlderThan, Limit: 10}, want: []string{"a", "b", "c"}},
		{name: "limit makes it exact", opts: storage.ListOptions{ResourceVersion: rv(revA), Limit: 10}, want: []string{"a"}, exact: revA},
		{name: "exact", opts: storage.ListOptions{ResourceVersion: rv(revB), ResourceVersionMatch: storage.MatchExact}, want: []string{"a", "b"}, exact: revB},
		{name: "exact latest", opts: storage.ListOptions{ResourceVersion: rv(revC), ResourceVersionMatch: storage.MatchExact}, want: []string{"a", "b", "c"}, exact: revC},
		{name: "future, not older than", opts: storage.ListOptions{ResourceVersion: future}, code: storage.TooLargeResourceVersion},
		{name: "future, exact", opts: storage.ListOptions{ResourceVersion: future, ResourceVersionMatch: storage.MatchExact}, code: storage.TooLargeResourceVersion},
		{name: "future, limit", opts: storage.ListOptions{ResourceVersion: future, Limit: 1}, code: storage.TooLargeResourceVersion},
		{name: "match without rv", opts: storage.ListOptions{ResourceVersionMatch: storage.MatchExact}, code: storage.Invalid},
		{name: "exact 0", opts: storage.ListOptions{ResourceVersion: "0", ResourceVersionMatch: storage.MatchExact}, code: storage.Invalid},
		{name: "unknown match", opts: storage.ListOptions{ResourceVersion: "5", ResourceVersionMatch: "Newest"}, code: storage.Invalid},
		{name: "unparsable rv", opts: storage.ListOptions{ResourceVersion: "x1"}, code: storage.Invalid},
		{name: "negative limit", opts: storage.ListOptions{Limit: -1}, code: storage.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.List(ctx, "pods/ns/", tt.opts)
			if code := storage.CodeOf(err); code != tt.code {
				t.Fatalf("err = %v (code %s), want code %s", err, code, tt.code)
			}
			if tt.code == storage.TooLargeResourceVersion {
				checkTooLarge(t, err, current+1000, current)
			}
			if tt.code != 0 {
				return
			}
			if keys := keysOf(got.Items); !slices.Equal(keys, prefixed("pods/ns/", tt.want)) {
				t.Errorf("keys = %q, want %q", keys, tt.want)
			}
			if tt.exact != 0 && got.Revision != tt.exact {
				t.Errorf("revision = %d, want %d", got.Revision, tt.exact)
			}
			if tt.exact == 0 && got.Revision < revC {
				t.Errorf("revision = %d, older than the last write %d", got.Revision, revC)
			}
		})
	}
}

func TestListContinueTokens(t *testing.T) {
	ctx := testContext(t)
	s := newStore(t, nil, Config{})
	fill(t, s, "pods/", "a/1", "a/2", "a/3", "b/1")
	page, err := s.List(ctx, "pods/a/", storage.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	token := page.Continue
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	good, _ := base64.RawURLEncoding.DecodeString(token)
	tests := []struct {
		name string
		opts storage.ListOptions
		code storage.ErrorCode
	}{
		{"valid", storage.ListOptions{Continue: token}, 0},
		{"valid with rv 0", storage.ListOptions{Continue: token, ResourceVersion: "0"}, 0},
		// The watch cache hands its lists, with its tokens, to the store while it is not serving.
		{"the watch cache's", storage.ListOptions{Continue: storage.EncodeContinue("pods/a/", storage.ContinueToken{Revision: page.Revision, Start: "1\x00", Source: "watchcache"})}, 0},
		{"with a resourceVersion", storage.ListOptions{Continue: token, ResourceVersion: "5"}, storage.Invalid},
		{"with a resourceVersionMatch", storage.ListOptions{Continue: token, ResourceVersion: "0", ResourceVersionMatch: storage.MatchNotOlderThan}, storage.Invalid},
		{"not base64", storage.ListOptions{Continue: "%%%"}, storage.InvalidContinue},
		{"not JSON", storage.ListOptions{Continue: raw("hello")}, storage.InvalidContinue},
		{"wrong version", storage.ListOptions{Continue: raw(strings.Replace(string(good), "meta.k8s.io/v1", "v0", 1))}, storage.InvalidContinue},
		{"no revision", storage.ListOptions{Continue: storage.EncodeContinue("pods/a/", storage.ContinueToken{Start: "2"})}, storage.InvalidContinue},
		{"no start", storage.ListOptions{Continue: storage.EncodeContinue("pods/a/", storage.ContinueToken{Revision: 3})}, storage.InvalidContinue},
		// kube reads the token before it looks at the resourceVersion beside it.
		{"not base64, with a resourceVersion", storage.ListOptions{Continue: "%%%", ResourceVersion: "5"}, storage.InvalidContinue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.List(ctx, "pods/a/", tt.opts)
			if code := storage.CodeOf(err); code != tt.code {
				t.Errorf("err = %v (code %s), want code %s", err, code, tt.code)
			}
		})
	}
	t.Run("kube's words for a token beside a resourceVersion", func(t *testing.T) {
		_, err := s.List(ctx, "pods/a/", storage.ListOptions{Continue: token, ResourceVersion: "5"})
		if !errors.Is(err, storage.ErrContinueWithResourceVersion) || err.Error() != "specifying resource version is not allowed when using continue" {
			t.Errorf("err = %v, want %v", err, storage.ErrContinueWithResourceVersion)
		}
	})
	t.Run("another list's token", func(t *testing.T) {
		_, err := s.List(ctx, "pods/b/", storage.ListOptions{Continue: token})
		if !storage.IsInvalidContinue(err) {
			t.Errorf("err = %v, want InvalidContinue", err)
		}
	})
	if _, err := s.List(ctx, "", storage.ListOptions{}); !storage.IsInvalid(err) {
		t.Errorf("List of an empty prefix: err = %v, want Invalid", err)
	}
}

// Lists reading at a compacted revision expire; a continued one gets a fresh token that goes on from
// the same key at the latest revision.
func TestListExpiredAfterCompaction(t *testing.T) {
	ctx := testContext(t)
	srv := storagetest.IsolatedEtcd(t)
	s := newStore(t, srv.ClientURLs(), Config{})
	revA := fill(t, s, "pods/ns/", "a", "b", "c")
	first, err := s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, "pods/ns/", "d")
	if _, err := s.Delete(ctx, "pods/ns/b", nil); err != nil {
		t.Fatal(err)
	}
	current, _ := s.CurrentRevision(ctx)
	if _, err := s.kv.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}

	_, err = s.List(ctx, "pods/ns/", storage.ListOptions{Limit: 1, Continue: first.Continue})
	var se *storage.StorageError
	if !errors.As(err, &se) || se.Code != storage.Expired {
		t.Fatalf("continue after compaction: err = %v, want Expired", err)
	}
	if se.Continue == "" || !strings.HasPrefix(err.Error(), "The provided continue parameter is too old to display a consistent list result.") {
		t.Fatalf("Expired error: continue %q, message %q", se.Continue, err.Error())
	}
	got, _, _ := listAll(t, s, "pods/ns/", storage.ListOptions{Limit: 1, Continue: se.Continue})
	if want := []string{"pods/ns/c", "pods/ns/d"}; !slices.Equal(got, want) {
		t.Errorf("the fresh token lists %q, want %q (the latest state after a)", got, want)
	}

	_, err = s.List(ctx, "pods/ns/", storage.ListOptions{ResourceVersion: strconv.FormatInt(revA, 10), ResourceVersionMatch: storage.MatchExact})
	if !errors.As(err, &se) || se.Code != storage.Expired || se.Continue != "" {
		t.Fatalf("exact list at a compacted revision: err = %v, want Expired without a token", err)
	}
}
