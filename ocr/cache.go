package ocr

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"
	"sync"
)

// Cache remembers an engine's results by the image's content hash, the
// languages, the region, the scale and the segmentation mode, keeping the
// most recently used entries. Concurrent calls for the same key share one
// recognition. It is safe for concurrent use.
type Cache struct {
	engine Engine
	max    int

	mu       sync.Mutex
	order    *list.List // of *entry, most recent first
	entries  map[cacheKey]*list.Element
	inflight map[cacheKey]*call
	hits     int64
	misses   int64
}

type cacheKey struct {
	sum    [sha256.Size]byte
	langs  string
	region image.Rectangle
	scale  float64
	psm    int
}

type entry struct {
	key cacheKey
	res *Result
}

type call struct {
	done chan struct{}
	res  *Result
	err  error
}

var _ Engine = (*Cache)(nil)

// NewCache wraps e with a cache of up to size results; size <= 0 means 64.
func NewCache(e Engine, size int) *Cache {
	if size <= 0 {
		size = 64
	}
	return &Cache{engine: e, max: size, order: list.New(),
		entries: make(map[cacheKey]*list.Element), inflight: make(map[cacheKey]*call)}
}

// CacheStats counts lookups.
type CacheStats struct {
	Hits, Misses int64
	Entries      int
}

// Stats returns how the cache has done so far.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Entries: c.order.Len()}
}

// Recognize implements Engine. A hit returns a copy of the stored result.
func (c *Cache) Recognize(ctx context.Context, img []byte, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	k := cacheKey{sum: sha256.Sum256(img), langs: strings.Join(opts.Languages, "+"),
		region: opts.Region, scale: opts.Scale, psm: opts.PSM}
	for {
		c.mu.Lock()
		if el, ok := c.entries[k]; ok {
			c.order.MoveToFront(el)
			c.hits++
			res := el.Value.(*entry).res
			c.mu.Unlock()
			return res.clone(), nil
		}
		if cl, ok := c.inflight[k]; ok {
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-cl.done:
			}
			// A leader that was cancelled leaves the work to us.
			if cl.err != nil && (errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded)) {
				continue
			}
			if cl.err != nil {
				return nil, cl.err
			}
			c.mu.Lock()
			c.hits++
			c.mu.Unlock()
			return cl.res.clone(), nil
		}
		cl := &call{done: make(chan struct{})}
		c.inflight[k] = cl
		c.misses++
		c.mu.Unlock()
		return c.lead(ctx, k, cl, img, opts)
	}
}

func (c *Cache) lead(ctx context.Context, k cacheKey, cl *call, img []byte, opts *Options) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("ocr: engine panicked: %v", p)
		}
		cl.res, cl.err = res, err
		c.mu.Lock()
		delete(c.inflight, k)
		if err == nil {
			c.entries[k] = c.order.PushFront(&entry{key: k, res: res})
			for c.order.Len() > c.max {
				old := c.order.Remove(c.order.Back()).(*entry)
				delete(c.entries, old.key)
			}
		}
		c.mu.Unlock()
		close(cl.done)
		if err == nil {
			res = res.clone()
		}
	}()
	res, err = c.engine.Recognize(ctx, img, opts)
	if err == nil && res == nil {
		err = errors.New("ocr: engine returned neither a result nor an error")
	}
	return res, err
}

// clone copies a result so callers may change theirs freely.
func (r *Result) clone() *Result {
	out := *r
	out.Words = slices.Clone(r.Words)
	out.Languages = slices.Clone(r.Languages)
	out.Lines = make([]Line, len(r.Lines))
	for i, l := range r.Lines {
		l.Words = slices.Clone(l.Words)
		out.Lines[i] = l
	}
	return &out
}
