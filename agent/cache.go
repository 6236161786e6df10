package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/scene"
)

// CacheStore keeps the replay cache's entries as the events of CacheTask
// (store.Store does). It is safe for concurrent use.
type CacheStore interface {
	event.Recorder
	Events(ctx context.Context, taskID string) ([]event.Event, error)
}

// CacheTask is the store task under which replay-cache entries are kept
// (as events: append-only, the last entry for a key wins).
const CacheTask = "apex-replay-cache"

// Cache is the replay cache: how a step was resolved on a screen, keyed by
// (step, screen fingerprint). A re-run on the same screen reuses the
// resolution after checking that the element is still there, and the
// validator checks the outcome; on a mismatch the executor falls back to
// rules or the model and the entry is replaced. It lives in a JSON file
// beside the script and in the store. Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	path    string
	st      CacheStore
	entries map[string]CacheEntry
}

// CacheEntry is one cached resolution.
type CacheEntry struct {
	Step        string          `json:"step"` // the step as text: tap "Sign in"
	Fingerprint string          `json:"fingerprint"`
	Action      string          `json:"action"`
	Params      json.RawMessage `json:"params"`
	// Element is the element the step acted on; a re-run checks it is
	// still at the same id.
	Element *scene.Element `json:"element,omitempty"`
	Via     string         `json:"via"` // how it was first resolved: rule or model
	Saved   time.Time      `json:"saved"`
}

// OpenCache loads the cache from path (a JSON file; "" keeps none) and
// from the store (nil keeps none); the file wins for a key in both.
func OpenCache(ctx context.Context, path string, st CacheStore) (*Cache, error) {
	c := &Cache{path: path, st: st, entries: map[string]CacheEntry{}}
	if st != nil {
		evs, err := st.Events(ctx, CacheTask)
		if err != nil {
			return nil, fmt.Errorf("agent: read the replay cache from the store: %w", err)
		}
		for _, e := range evs {
			var ce CacheEntry
			if json.Unmarshal(e.Payload, &ce) == nil && ce.Fingerprint != "" {
				c.entries[cacheKey(ce.Step, ce.Fingerprint)] = ce
			}
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("agent: read the replay cache: %w", err)
		default:
			var list []CacheEntry
			if err := json.Unmarshal(data, &list); err != nil {
				return nil, fmt.Errorf("agent: replay cache %s is not valid (delete it to start afresh): %w", path, err)
			}
			for _, ce := range list {
				c.entries[cacheKey(ce.Step, ce.Fingerprint)] = ce
			}
		}
	}
	return c, nil
}

// CachePath is the cache file beside a script: shop.yaml → shop.cache.json.
func CachePath(script string) string {
	ext := filepath.Ext(script)
	return script[:len(script)-len(ext)] + ".cache.json"
}

func cacheKey(step, fp string) string {
	h := sha256.Sum256([]byte(step + "\x00" + fp))
	return hex.EncodeToString(h[:12])
}

// Len is the number of entries.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Entries lists the entries (in no particular order).
func (c *Cache) Entries() []CacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CacheEntry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	return out
}

func (c *Cache) get(step, fp string) (CacheEntry, bool) {
	if c == nil {
		return CacheEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[cacheKey(step, fp)]
	return e, ok
}

func (c *Cache) drop(step, fp string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, cacheKey(step, fp))
}

// put records a verified resolution in memory, the store and the file.
func (c *Cache) put(ctx context.Context, e CacheEntry) error {
	if c == nil {
		return nil
	}
	e.Saved = time.Now().UTC()
	c.mu.Lock()
	c.entries[cacheKey(e.Step, e.Fingerprint)] = e
	c.mu.Unlock()
	var errs []error
	if c.st != nil {
		raw, _ := json.Marshal(e)
		if err := c.st.AddEvent(context.WithoutCancel(ctx), event.Event{TaskID: CacheTask, SourceRole: event.RoleExecutor,
			TargetRole: event.RoleExecutor, ActionType: "cache_put", Payload: raw, Status: event.StatusOK, Confidence: 1}); err != nil {
			errs = append(errs, err)
		}
	}
	if c.path != "" {
		errs = append(errs, c.Save())
	}
	return errors.Join(errs...)
}

// Save writes the file (when the cache has one).
func (c *Cache) Save() error {
	if c == nil || c.path == "" {
		return nil
	}
	list := c.Entries()
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("agent: write the replay cache: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("agent: write the replay cache: %w", err)
	}
	return nil
}
