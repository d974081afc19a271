package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apictl/apictl/pkg/storage"
	"github.com/apictl/apictl/pkg/storage/encryption"
)

// chunksOf reads prefix with ListChunks and returns every item, how many chunks carried them, and
// the revision.
func chunksOf(t *testing.T, s *Store, prefix string) ([]storage.KeyValue, int, int64) {
	t.Helper()
	var items []storage.KeyValue
	chunks := 0
	rev, err := s.ListChunks(testContext(t), prefix, func(chunk []storage.KeyValue) error {
		chunks++
		items = append(items, chunk...)
		return nil
	})
	if err != nil {
		t.Fatalf("ListChunks(%q): %v", prefix, err)
	}
	return items, chunks, rev
}

// TestListChunksIsList: a streamed read holds exactly what a list at the same moment holds, in the
// same order, at the same revision, whatever the prefix and however many chunks it takes.
func TestListChunksIsList(t *testing.T) {
	s := newStore(t, nil, Config{})
	fill(t, s, "", "configmaps/a/x", "configmaps/ab/y", "configmaps/a/z", "configmapsx/a/w", "secrets/a/v")
	// Enough data that etcd sends it in several chunks: they grow from 10 keys towards its request
	// size limit.
	value := bytes.Repeat([]byte("v"), 2000)
	for i := range 3000 {
		if _, err := s.Create(testContext(t), fmt.Sprintf("widgets/ns%d/w%04d", i%7, i), value, 0); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		prefix    string
		wantCount int
		// manyChunks says the read must have been streamed in more than one chunk.
		manyChunks bool
	}{
		{prefix: "configmaps/a/", wantCount: 2},
		{prefix: "configmaps/a", wantCount: 2}, // the missing "/" is added
		{prefix: "configmaps/", wantCount: 3},
		{prefix: "configmaps/b/", wantCount: 0},
		{prefix: "widgets/", wantCount: 3000, manyChunks: true},
		{prefix: "widgets/ns3/", wantCount: 429},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, chunks, rev := chunksOf(t, s, tt.prefix)
			want, err := s.List(testContext(t), tt.prefix, storage.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rev != want.Revision {
				t.Errorf("revision %d, the list's %d", rev, want.Revision)
			}
			if len(got) != tt.wantCount {
				t.Errorf("%d items, want %d", len(got), tt.wantCount)
			}
			if !slices.EqualFunc(got, want.Items, func(a, b storage.KeyValue) bool {
				return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && a.ModRevision == b.ModRevision
			}) {
				t.Errorf("items %q differ from the list's %q", keysOf(got), keysOf(want.Items))
			}
			if tt.manyChunks && chunks < 2 {
				t.Errorf("%d chunk(s), want the read streamed in several", chunks)
			}
		})
	}
}

// TestListChunksDecodes: values encrypted at rest come out as the list gives them, and one that does
// not decrypt fails the read with the list's message.
func TestListChunksDecodes(t *testing.T) {
	ts := encryption.NewTransformers(encryptionConfig(t, "key1"), servedForTest)
	s := newStore(t, nil, Config{Transformers: ts})
	secret := []byte(`{"kind":"Secret","data":{"k":"dg=="}}`)
	if _, err := s.Create(testContext(t), "secrets/default/a", secret, 0); err != nil {
		t.Fatal(err)
	}
	got, _, _ := chunksOf(t, s, "secrets/")
	if len(got) != 1 || !bytes.Equal(got[0].Value, secret) || got[0].Key != "secrets/default/a" {
		t.Fatalf("items %+v, want the plaintext secret", got)
	}
	other := newStore(t, nil, Config{Prefix: s.prefix, Transformers: encryption.NewTransformers(encryptionConfig(t, "key2"), servedForTest)})
	_, err := other.ListChunks(testContext(t), "secrets/", func([]storage.KeyValue) error { return nil })
	if want := `unable to transform key "` + s.prefix + `secrets/default/a": no matching key was found for the provided AES transformer`; err == nil || err.Error() != want {
		t.Errorf("ListChunks with another key: %v; want %s", err, want)
	}
}

// TestListChunksStops: an error of the caller's ends the read and is returned as it is, and so does
// the end of the context.
func TestListChunksStops(t *testing.T) {
	s := newStore(t, nil, Config{})
	fill(t, s, "configmaps/default/", names(50)...)
	stop := errors.New("enough")
	calls := 0
	_, err := s.ListChunks(testContext(t), "configmaps/", func([]storage.KeyValue) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ListChunks = %v after %d call(s), want %v after 1", err, calls, stop)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	if _, err := s.ListChunks(ctx, "configmaps/", func([]storage.KeyValue) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("ListChunks with an ended context = %v, want context.Canceled", err)
	}
}

// TestListChunksFailed: a stream that etcd does not know (an etcd older than 3.7) is answered with one
// ordinary list; any other failure, or one after chunks were handed, is the list's error.
func TestListChunksFailed(t *testing.T) {
	s := newStore(t, nil, Config{})
	wantRev := fill(t, s, "configmaps/default/", "a", "b")
	unimplemented := status.Error(codes.Unimplemented, "unknown method RangeStream")
	tests := []struct {
		name      string
		handed    bool
		streamErr error
		wantKeys  []string
		wantErr   string
	}{
		{name: "unimplemented", streamErr: unimplemented, wantKeys: []string{"configmaps/default/a", "configmaps/default/b"}},
		{name: "unimplemented after chunks", handed: true, streamErr: unimplemented, wantErr: "Unimplemented"},
		{name: "other", streamErr: status.Error(codes.PermissionDenied, "no"), wantErr: "PermissionDenied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys []string
			rev, err := s.listChunksFailed(testContext(t), "configmaps/", func(chunk []storage.KeyValue) error {
				keys = append(keys, keysOf(chunk)...)
				return nil
			}, tt.handed, tt.streamErr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || keys != nil {
					t.Errorf("error %v with keys %q, want one with %q and no keys", err, keys, tt.wantErr)
				}
				return
			}
			if err != nil || rev < wantRev || !slices.Equal(keys, tt.wantKeys) {
				t.Errorf("answer %q at %d, %v; want %q at %d or later", keys, rev, err, tt.wantKeys, wantRev)
			}
		})
	}
}
