package storage

import "context"

// ChunkLister is a store that can read a whole resource as a stream of chunks: the store produces the
// next chunk while the caller takes in the one before, and no response holds the whole resource at
// once. A watch cache fills itself this way at start.
type ChunkLister interface {
	// ListChunks reads every key under prefix at the store's latest revision (a consistent read) and
	// hands them to each in key order, a chunk at a time; each chunk's slice is the caller's. It
	// returns the revision read, or the first error of the read or of each.
	ListChunks(ctx context.Context, prefix string, each func([]KeyValue) error) (int64, error)
}
