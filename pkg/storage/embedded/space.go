package embedded

import "fmt"

// etcd writes its log in 64 MiB segments that it allocates ahead; a member that cannot allocate one
// panics and takes the process with it. So apictl keeps a reserve on the data directory's filesystem:
const (
	// MinStartFreeBytes is the least free space a start needs: a segment and room to replay.
	MinStartFreeBytes = 96 << 20
	// ReserveFreeBytes is the free space below which the server refuses writes (see Server.Space),
	// well before etcd would run out.
	ReserveFreeBytes = 128 << 20
)

// Space is the free space on the filesystem of the etcd's directory.
type Space struct {
	Dir   string
	Free  uint64
	Known bool
}

// Low reports whether writes should stop to keep the reserve.
func (s Space) Low() bool { return s.Known && s.Free < ReserveFreeBytes }

// Error says why writes are refused; nil when they are not.
func (s Space) Error() error {
	if !s.Low() {
		return nil
	}
	return fmt.Errorf("the filesystem of the embedded etcd (%s) has %s free, less than the %s it keeps in reserve: writes are refused until space is freed",
		s.Dir, mebibytes(s.Free), mebibytes(ReserveFreeBytes))
}

func mebibytes(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Space reads the free space on the filesystem of the etcd's directory.
func (s *Server) Space() Space {
	dir := s.etcd.Config().Dir
	free, ok := freeBytes(dir)
	return Space{Dir: dir, Free: free, Known: ok}
}

// checkStartSpace refuses to start etcd on a filesystem with less than MinStartFreeBytes free, where
// etcd would panic allocating its log.
func checkStartSpace(dir string) error {
	free, ok := freeBytes(dir)
	if !ok || free >= MinStartFreeBytes {
		return nil
	}
	return fmt.Errorf("the filesystem of %s has %s free and etcd needs at least %s to start: free some space or choose another --data-dir",
		dir, mebibytes(free), mebibytes(MinStartFreeBytes))
}
