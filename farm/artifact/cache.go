package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultCacheBytes bounds a host's artifact cache unless told otherwise.
const DefaultCacheBytes = 4 << 30

// Cache keeps artifacts on a host's disk by hash, so a run installs an app
// without fetching it again. It holds at most max bytes: past that, the
// artifacts used longest ago (and not in use) are removed. Safe for
// concurrent use; one process per directory.
type Cache struct {
	store *Store
	dir   string
	max   int64

	mu       sync.Mutex
	inUse    map[string]int         // hash → fetches not yet released
	fetching map[string]*sync.Mutex // hash → held while it downloads
	// Fetches counts downloads from the store (a test reads it).
	fetches int
}

// NewCache keeps artifacts from store in dir, at most maxBytes (0: the
// default).
func NewCache(store *Store, dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("artifact: cache directory: %w", err)
	}
	return &Cache{store: store, dir: dir, max: maxBytes, inUse: map[string]int{}, fetching: map[string]*sync.Mutex{}}, nil
}

// Fetch returns the path of artifact a (as Store.Resolve found it in its
// project) on this disk, downloading it from a.Project's store once; the
// file stays until release is called. Files are kept by hash: the same
// bytes in two projects are one file. a.Kind picks the file's extension
// (installers look at it).
func (c *Cache) Fetch(ctx context.Context, a Info) (path string, release func(), err error) {
	hash := a.Hash
	if !hexHash().MatchString(hash) || len(hash) != 64 {
		return "", nil, fmt.Errorf("artifact: %q is not a SHA-256", hash)
	}
	switch a.Kind {
	case "apk", "ipa", "app":
	default:
		return "", nil, fmt.Errorf("artifact %s: kind %q is none of apk, ipa, app: upload it again", hash, a.Kind)
	}
	c.mu.Lock()
	c.inUse[hash]++
	lock := c.fetching[hash]
	if lock == nil {
		lock = &sync.Mutex{}
		c.fetching[hash] = lock
	}
	c.mu.Unlock()
	release = func() {
		c.mu.Lock()
		c.inUse[hash]--
		if c.inUse[hash] == 0 {
			delete(c.inUse, hash)
		}
		c.mu.Unlock()
	}
	path = filepath.Join(c.dir, hash+"."+a.Kind)
	lock.Lock()
	defer lock.Unlock()
	now := time.Now()
	if err := os.Chtimes(path, now, now); err == nil { // a hit: now the most recently used
		return path, release, nil
	}
	if err := c.download(ctx, a.Project, hash, path); err != nil {
		release()
		return "", nil, err
	}
	c.evict()
	return path, release, nil
}

// download fetches hash from project's store into path through a
// temporary file, checking that the content has the hash.
func (c *Cache) download(ctx context.Context, project, hash, path string) error {
	tmp, err := os.CreateTemp(c.dir, ".fetch-*")
	if err != nil {
		return fmt.Errorf("artifact: cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := sha256.New()
	err = c.store.download(ctx, project, hash, io.MultiWriter(tmp, sum))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("artifact: fetch %s: %w", hash, err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != hash {
		return fmt.Errorf("artifact: fetched %s but its content hashes to %s: upload it again", hash, got)
	}
	c.mu.Lock()
	c.fetches++
	c.mu.Unlock()
	return os.Rename(tmp.Name(), path)
}

// evict removes the least recently used artifacts not in use while the
// cache holds more than its bound.
func (c *Cache) evict() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		name, hash string
		size       int64
		used       time.Time
	}
	var files []file
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		hash, _, _ := strings.Cut(e.Name(), ".")
		files = append(files, file{e.Name(), hash, info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range files {
		if total <= c.max {
			return
		}
		if c.inUse[f.hash] > 0 {
			continue
		}
		if os.Remove(filepath.Join(c.dir, f.name)) == nil {
			total -= f.size
		}
	}
}

// Fetches is how many artifacts were downloaded (not found in the cache).
func (c *Cache) Fetches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches
}
