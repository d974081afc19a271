package storage

// SharedFilter is a Filter in two halves, so that a store holding many readers of one stored value
// (the watch cache, whose watchers each select the same change) reads the value once for all of
// them: Read decodes what Match decides by, and Filter is Match(Read(kv)).
//
// kube's watch cache keeps each object's labels and fields beside it for the same reason; apictl
// keeps only the bytes (objects are streamed as stored), so the cache keeps a change's reading only
// while the change is recent (cacher.change).
type SharedFilter struct {
	// Reader reads what Match decides by. Filters with the same Reader read a value the same way, so
	// one reading serves them all: a resource has one Reader, however many selectors use it.
	Reader *Reader
	// Match decides by what Reader read.
	Match func(read any) bool
}

// Reader decodes from a stored value what a SharedFilter's Match decides by.
type Reader struct {
	Read func(kv KeyValue) (any, error)
}

// Filter is f as a plain Filter, for stores that do not share readings; nil for a nil f.
func (f *SharedFilter) Filter() Filter {
	if f == nil {
		return nil
	}
	return func(kv KeyValue) (bool, error) {
		read, err := f.Reader.Read(kv)
		if err != nil {
			return false, err
		}
		return f.Match(read), nil
	}
}
