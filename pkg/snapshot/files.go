package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// List describes the snapshots in dir, oldest first: every file but records, hidden and temporary
// ones. A missing dir holds none.
func List(dir string) ([]Info, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if !e.Type().IsRegular() || !isSnapshotName(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, ok, err := readMetadata(path)
		if err != nil {
			return nil, err
		}
		if !ok {
			st, err := e.Info()
			if err != nil {
				return nil, fmt.Errorf("listing snapshots: %w", err)
			}
			info = Info{Size: st.Size(), Created: st.ModTime().UTC().Truncate(time.Second)}
		}
		info.Name, info.Path, info.Recorded = e.Name(), path, ok
		out = append(out, info)
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Delete removes the snapshot name from dir, with its record and the identity saved with it.
func Delete(dir, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	if err := os.Remove(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no snapshot named %s in %s (apictl snapshot ls lists them)", name, dir)
	} else if err != nil {
		return fmt.Errorf("deleting snapshot %s: %w", name, err)
	}
	if err := os.Remove(path + metadataSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("deleting the record of snapshot %s: %w", name, err)
	}
	if err := os.RemoveAll(IdentityDir(path)); err != nil {
		return fmt.Errorf("deleting the CAs and keys saved with snapshot %s: %w", name, err)
	}
	return nil
}

// Prune deletes the oldest snapshots in dir whose names start with prefix until retention of them
// are left, and returns the ones it deleted.
func Prune(dir, prefix string, retention int) ([]Info, error) {
	if retention < 1 {
		return nil, fmt.Errorf("retention %d: keep at least 1 snapshot", retention)
	}
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	var matching []Info
	for _, s := range all {
		if strings.HasPrefix(s.Name, prefix) {
			matching = append(matching, s)
		}
	}
	var deleted []Info
	for _, s := range matching[:max(0, len(matching)-retention)] {
		if err := Delete(dir, s.Name); err != nil {
			return deleted, err
		}
		deleted = append(deleted, s)
	}
	return deleted, nil
}
