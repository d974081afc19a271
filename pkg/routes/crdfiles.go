package routes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// manifestExtensions are the file names ReadCRDFiles takes from a directory, as kubectl -f does.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// ReadCRDFiles reads CRD manifests from files and directories (the *.yaml, *.yml and *.json files
// directly in them, in name order) and parses them with ParseCRDs. It is the package's only I/O. It
// returns the valid CRDs and every problem, each a *CRDError, joined.
func ReadCRDFiles(paths []string) ([]CRD, error) {
	var crds []CRD
	var errs []error
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			errs = append(errs, &CRDError{File: p, Err: err})
			continue
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, &CRDError{File: f, Err: fmt.Errorf("cannot be read: %w", unwrapPath(err))})
				continue
			}
			parsed, err := ParseCRDs(f, data)
			crds = append(crds, parsed...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return crds, errors.Join(errs...)
}

// manifestFiles lists the manifests a path names: itself, or the manifests in a directory.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("does not exist: give a CRD manifest file or a directory of them")
	}
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", unwrapPath(err))
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", unwrapPath(err))
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(e.Name()))) {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("holds no manifests: put CRDs in %s files", strings.Join(manifestExtensions, ", "))
	}
	return files, nil
}

// unwrapPath drops the path from a *fs.PathError, since messages already start with it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
