package flags

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"time"
)

// The checks below are shared by the sections. Each returns nil when the value is fine and otherwise a
// Problem whose message says what is wrong and how to fix it.

func checkPort(section, flag string, port int, off string) *Problem {
	if port < 0 || port > 65535 {
		return problemf(section, flag, strconv.Itoa(port), "must be between 0 and 65535, inclusive (0 turns %s off)", off)
	}
	return nil
}

func checkIP(section, flag, value string) *Problem {
	if value != "" && net.ParseIP(value) == nil {
		return problemf(section, flag, value, "is not an IP address: give an IPv4 or IPv6 address such as 127.0.0.1 or ::1")
	}
	return nil
}

func checkNotNegative(section, flag string, d time.Duration) *Problem {
	if d < 0 {
		return problemf(section, flag, d.String(), "can not be negative: use 0s or a positive duration such as 30s")
	}
	return nil
}

func checkPositive(section, flag string, d time.Duration) *Problem {
	if d <= 0 {
		return problemf(section, flag, d.String(), "must be greater than zero, such as 1m or 30s")
	}
	return nil
}

func checkNotNegativeInt(section, flag string, n int64, zero string) *Problem {
	if n < 0 {
		return problemf(section, flag, strconv.FormatInt(n, 10), "can not be negative: use 0 (%s) or a positive number", zero)
	}
	return nil
}

// checkReadableFile reports a missing, unreadable or non-regular file.
func checkReadableFile(section, flag, path string) *Problem {
	if path == "" {
		return nil
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return problemf(section, flag, path, "does not exist: check the path")
	case err != nil:
		return problemf(section, flag, path, "cannot be read: %v", err)
	case info.IsDir():
		return problemf(section, flag, path, "is a directory: give the path of a file")
	}
	f, err := os.Open(path)
	if err != nil {
		return problemf(section, flag, path, "cannot be read: %v", unwrapPathError(err))
	}
	f.Close()
	return nil
}

// unwrapPathError drops the "open <path>:" prefix, since the problem already names the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
