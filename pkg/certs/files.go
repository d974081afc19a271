package certs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
)

// File modes: private keys and kubeconfigs (which embed one) are for the owner only.
const (
	modeKey        fs.FileMode = 0o600
	modeCert       fs.FileMode = 0o644
	modeKubeconfig fs.FileMode = 0o600
	modeDir        fs.FileMode = 0o700
)

// fileWriter puts one file in place. The real one writes atomically; tests substitute one that
// fails, to check that a run that fails midway leaves the directory as it was.
type fileWriter interface {
	writeFile(path string, data []byte, mode fs.FileMode) error
}

// atomicWriter writes to a temporary file in the target's directory, syncs it and renames it over
// the target: a reader sees the old file or the new one, never a part, and after a crash the file is
// one or the other. fileSet.commit syncs each directory once after its renames, which makes them
// durable.
type atomicWriter struct{}

var _ fileWriter = atomicWriter{}

func (atomicWriter) writeFile(path string, data []byte, mode fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	return nil
}

// syncDir makes a rename in dir durable. Windows cannot open a directory for syncing, and its
// renames need no such step.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, unwrapPath(err))
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the "open /path:" prefix of a PathError when the message names the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// pendingFile is a file a run means to write.
type pendingFile struct {
	path string
	data []byte
	mode fs.FileMode
}

// fileSet is everything one run writes, in order, committed together: if one write fails, the
// files written before it get their old contents back (or are removed if they were new), and the
// directories the run created are removed.
type fileSet struct {
	files []pendingFile
}

func (s *fileSet) add(path string, data []byte, mode fs.FileMode) {
	s.files = append(s.files, pendingFile{path: path, data: data, mode: mode})
}

// undo is how to put one path back as it was.
type undo struct {
	path    string
	old     []byte
	oldMode fs.FileMode
	existed bool
}

// commit writes every file through w. On failure it restores what it wrote and returns the write
// error joined with any error of the restore.
func (s *fileSet) commit(ctx context.Context, w fileWriter) error {
	var undos []undo
	var createdDirs []string
	rollback := func(cause error) error {
		errs := []error{cause}
		for i := len(undos) - 1; i >= 0; i-- {
			u := undos[i]
			if u.existed {
				err := atomicWriter{}.writeFile(u.path, u.old, u.oldMode)
				if err == nil {
					err = syncDir(filepath.Dir(u.path))
				}
				errs = append(errs, err)
			} else if err := os.Remove(u.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing %s after the failed run: %w", u.path, err))
			}
		}
		for i := len(createdDirs) - 1; i >= 0; i-- {
			_ = os.Remove(createdDirs[i]) // only empty directories go; others keep what was there
		}
		return errors.Join(errs...)
	}
	var dirs []string
	for _, f := range s.files {
		if dir := filepath.Dir(f.path); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		if err := ctx.Err(); err != nil {
			return rollback(fmt.Errorf("writing %s: %w", f.path, err))
		}
		made, err := mkdirAll(filepath.Dir(f.path))
		createdDirs = append(createdDirs, made...)
		if err != nil {
			return rollback(err)
		}
		u := undo{path: f.path}
		if info, err := os.Stat(f.path); err == nil {
			if info.IsDir() {
				return rollback(fmt.Errorf("writing %s: it is a directory: move it away", f.path))
			}
			if u.old, err = os.ReadFile(f.path); err != nil {
				return rollback(fmt.Errorf("reading %s before replacing it: %w", f.path, unwrapPath(err)))
			}
			u.existed, u.oldMode = true, info.Mode().Perm()
		}
		if err := w.writeFile(f.path, f.data, f.mode); err != nil {
			return rollback(err)
		}
		undos = append(undos, u)
	}
	for _, dir := range dirs {
		if err := syncDir(dir); err != nil {
			return rollback(err)
		}
	}
	return nil
}

// mkdirAll creates dir and its missing parents with mode 0700 and returns the ones it created,
// outermost first. A path element that is a file is an error that says so.
func mkdirAll(dir string) ([]string, error) {
	info, err := os.Stat(dir)
	if err == nil {
		if !info.IsDir() {
			return nil, fmt.Errorf("%s is a file, not a directory: give a directory path", dir)
		}
		return nil, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checking directory %s: %w", dir, unwrapPath(err))
	}
	parent := filepath.Dir(dir)
	var created []string
	if parent != dir {
		if created, err = mkdirAll(parent); err != nil {
			return created, err
		}
	}
	if err := os.Mkdir(dir, modeDir); err != nil {
		if errors.Is(err, fs.ErrExist) { // made by someone else meanwhile: not ours to remove
			return created, nil
		}
		return created, fmt.Errorf("creating directory %s: %w", dir, unwrapPath(err))
	}
	return append(created, dir), nil
}
