package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// processStart is when process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat).
func processStart(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// or parentheses itself: count fields after its last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseInt(f[19], 10, 64)
}

// processState says whether process pid exists and when it started; known
// is false when /proc cannot tell.
func processState(pid int) (alive bool, start int64, known bool) {
	start, err := processStart(pid)
	switch {
	case err == nil:
		return true, start, true
	case errors.Is(err, fs.ErrNotExist):
		return false, 0, true
	}
	return false, 0, false
}
