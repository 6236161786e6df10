package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/device"
	devlease "github.com/apexagent/apex/device/lease"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/scene"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// findTimeout is how long an action tool waits for its target to show: a
// model names what it saw, which may still be loading.
const findTimeout = 2 * time.Second

// errInUse is what a session gets for a device another session leased.
var errInUse = errors.New("is in use by another session")

// lease is one device opened by one session. Its mutex serialises the
// session's tool calls on the device, so inputs arrive in order and the
// last observation stays consistent with them.
type lease struct {
	mu     sync.Mutex
	target device.Target
	driver device.Driver
	// sess runs the device's steps and observes its screen (the tree,
	// with OCR where it cannot be trusted). Guarded by mu, like scene.
	sess  *engine.Session
	owner *sdk.ServerSession
	space *action.Space
	hold  *devlease.Lease // the cross-process lease, if any
	ready chan struct{}   // closed once driver is set (or opening failed)
	err   error           // why opening failed

	// Guarded by Server.mu.
	last time.Time
	busy int // tool calls running or waiting: a busy lease is never idle

	// Guarded by mu.
	scene *scene.Scene // the last observation; element ids refer to it
	// agent is the device-hub session bound to the lease (hub.go); ending
	// the lease ends it.
	agent *agentBinding
}

func (l *lease) close() {
	<-l.ready
	l.endAgent()
	if l.driver != nil {
		l.sess.Close()
		l.driver.Close()
	}
	l.hold.Release()
}

// inUse is the error for a device leased by another session.
func inUse(id string) error {
	return fmt.Errorf("device %s %w: it is leased until that session calls device_close, ends, or stays idle; pick another device (device_list)", id, errInUse)
}

// expired reports whether l has been idle past the timeout: no tool call
// on it for that long, and none running. Callers hold s.mu.
func (s *Server) expired(l *lease) bool {
	return l.busy == 0 && s.opts.Now().Sub(l.last) > s.opts.IdleTimeout
}

// open leases the device query names to ss, opening its driver. A device
// the session already holds is returned as is.
func (s *Server) open(ctx context.Context, ss *sdk.ServerSession, query string) (*lease, bool, error) {
	if l, err := s.held(ss, query); err == nil {
		return l, false, nil
	} else if errors.Is(err, errInUse) {
		return nil, false, err
	}
	t, err := s.reg.Resolve(ctx, query)
	if err != nil {
		return nil, false, fmt.Errorf("device %q: %w", query, err)
	}
	if !t.Ready() {
		return nil, false, fmt.Errorf("device %s is %s: %s", t.ID, t.State, t.Hint)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false, errors.New("the server is shutting down")
	}
	var stale *lease
	if l := s.leases[t.ID]; l != nil {
		switch {
		case l.owner == ss:
			l.last = s.opts.Now()
			s.mu.Unlock()
			<-l.ready
			return l, false, l.err
		case !s.expired(l):
			s.mu.Unlock()
			return nil, false, inUse(t.ID)
		}
		stale = l
		s.opts.Log.Info("mcp: idle lease taken over", "device", t.ID)
	}
	l := &lease{target: t, owner: ss, space: s.spaceFor(t.Platform), ready: make(chan struct{}), last: s.opts.Now()}
	s.leases[t.ID] = l
	s.watch(ss)
	s.mu.Unlock()
	if stale != nil {
		stale.close()
	}

	if s.opts.LockDir != "" {
		if l.hold, err = devlease.Acquire(ctx, t.ID, &devlease.Options{Dir: s.opts.LockDir, Command: leaseCommand(ss)}); err != nil {
			if errors.Is(err, devlease.ErrInUse) {
				err = fmt.Errorf("%w: it is leased until that process releases it or ends; pick another device (device_list)", err)
			}
			l.err = err
			close(l.ready)
			s.drop(l)
			return nil, false, err
		}
	}
	d, _, err := s.reg.Open(ctx, t.ID)
	if err != nil {
		l.hold.Release()
		l.err = err
		close(l.ready)
		s.drop(l)
		return nil, false, fmt.Errorf("open %s: %w", t.ID, err)
	}
	l.driver = d
	l.sess = engine.New(d, &engine.Options{Space: l.space, Perception: s.opts.Perception, FindTimeout: findTimeout, Log: s.opts.Log})
	close(l.ready)
	return l, true, nil
}

// held finds the device query names among ss's leases, refreshing its idle
// timer. A device leased by another live session is errInUse.
func (s *Server) held(ss *sdk.ServerSession, query string) (*lease, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("device is required: give the id device_open returned (device_list shows the devices)")
	}
	s.mu.Lock()
	var mine, others []*lease
	for _, l := range s.leases {
		if !matches(l.target, query) {
			continue
		}
		if l.owner == ss {
			mine = append(mine, l)
		} else if !s.expired(l) {
			others = append(others, l)
		}
	}
	if len(mine) == 1 {
		l := mine[0]
		l.last = s.opts.Now()
		s.mu.Unlock()
		<-l.ready
		if l.err != nil {
			return nil, l.err
		}
		return l, nil
	}
	s.mu.Unlock()
	switch {
	case len(mine) > 1:
		ids := make([]string, len(mine))
		for i, l := range mine {
			ids[i] = l.target.ID
		}
		return nil, fmt.Errorf("device %q matches %d open devices (%s): give the full id", query, len(mine), strings.Join(ids, ", "))
	case len(others) > 0:
		return nil, inUse(others[0].target.ID)
	}
	return nil, fmt.Errorf("device %q is not open in this session: call device_open first (device_list shows the devices)", query)
}

// acquire is held plus the lease's lock, so the device's tool calls run one
// at a time; the caller ends its call with release. However long the call
// runs (an act may take minutes), the lease does not expire under it.
func (s *Server) acquire(ss *sdk.ServerSession, query string) (*lease, error) {
	l, err := s.held(ss, query)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.leases[l.target.ID] != l { // swept between held and here
		s.mu.Unlock()
		return nil, fmt.Errorf("device %s was released after idling: call device_open again", l.target.ID)
	}
	l.busy++
	s.mu.Unlock()
	l.mu.Lock()
	return l, nil
}

// release ends a call begun with acquire; the idle timer starts again.
func (s *Server) release(l *lease) {
	l.mu.Unlock()
	s.mu.Lock()
	l.busy--
	l.last = s.opts.Now()
	s.mu.Unlock()
}

// matches reports whether query names t: its full id, its serial, or an
// exact id match after the host prefix. Partial ids are resolved only by
// device_open, so a tool never drives a device by a guess.
func matches(t device.Target, query string) bool {
	q := strings.TrimSpace(query)
	return q == t.ID || q == t.Serial
}

// closeLease ends ss's lease on the device query names.
func (s *Server) closeLease(ss *sdk.ServerSession, query string) (*lease, error) {
	l, err := s.held(ss, query)
	if err != nil {
		return nil, err
	}
	s.drop(l)
	l.close()
	return l, nil
}

// drop removes l from the lease table if it is still there.
func (s *Server) drop(l *lease) {
	s.mu.Lock()
	if s.leases[l.target.ID] == l {
		delete(s.leases, l.target.ID)
	}
	s.mu.Unlock()
}

// watch releases ss's leases when the session ends. Callers hold s.mu.
func (s *Server) watch(ss *sdk.ServerSession) {
	if ss == nil || s.watched[ss] {
		return
	}
	s.watched[ss] = true
	go func() {
		ss.Wait()
		s.releaseSession(ss)
	}()
}

// releaseSession ends every lease of ss.
func (s *Server) releaseSession(ss *sdk.ServerSession) {
	s.mu.Lock()
	var ls []*lease
	for id, l := range s.leases {
		if l.owner == ss {
			ls = append(ls, l)
			delete(s.leases, id)
		}
	}
	delete(s.watched, ss)
	s.mu.Unlock()
	for _, l := range ls {
		s.opts.Log.Info("mcp: session ended, device released", "device", l.target.ID)
		l.close()
	}
}

// Sweep ends the leases idle past the timeout and closes their drivers. A
// long-running server calls it now and then (ServeHTTP does); expired
// leases are also taken over lazily by device_open.
func (s *Server) Sweep() int {
	s.mu.Lock()
	var ls []*lease
	for id, l := range s.leases {
		if s.expired(l) {
			ls = append(ls, l)
			delete(s.leases, id)
		}
	}
	s.mu.Unlock()
	for _, l := range ls {
		s.opts.Log.Info("mcp: idle lease ended", "device", l.target.ID)
		l.close()
	}
	return len(ls)
}

// leases lists the devices leased now, for device_list.
func (s *Server) leaseOwners() map[string]*sdk.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]*sdk.ServerSession{}
	for id, l := range s.leases {
		if !s.expired(l) {
			m[id] = l.owner
		}
	}
	return m
}

// spaceFor is the action space of a platform: the first space for it, or
// the first space when none matches.
func (s *Server) spaceFor(p device.Platform) *action.Space {
	for _, sp := range s.spaces {
		if sp.Platform() == string(p) {
			return sp
		}
	}
	return s.spaces[0]
}

// leaseCommand is what other processes are told holds the device: apex mcp
// and the MCP client of the session, when it said its name.
func leaseCommand(ss *sdk.ServerSession) string {
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			return "apex mcp for " + p.ClientInfo.Name
		}
	}
	return "apex mcp"
}
