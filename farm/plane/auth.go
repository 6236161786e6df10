package plane

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// authenticator lets a client in with the farm's --token (an admin), a
// user's API token (its role's permissions) or a join token (a host's),
// and the plane's own connection with its internal password. It keeps
// the projects in memory from a watch of the auth bucket, and drops the
// connections of a token revoked meanwhile (and users' connections when
// projects change, so they come back with permissions made afresh).
type authenticator struct {
	root, internal string
	ns             atomic.Pointer[server.Server]
	kv             atomic.Pointer[jetstream.KeyValue] // the auth bucket, once provisioned
	// rootOK holds the SHA-256 of presented root tokens that matched: a
	// hashed --token costs a bcrypt check each time.
	rootOK sync.Map

	// fails refuses an address that sent too many wrong tokens, as the
	// console and the playground do over HTTP.
	fails *httpguard.Failures

	mu       sync.Mutex
	projects map[string][]string            // project → members
	conns    map[string]map[uint64]struct{} // token hash → client IDs
	users    map[uint64]struct{}            // client IDs of users' tokens
}

var _ server.Authentication = (*authenticator)(nil)

func (a *authenticator) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o.Username == "apex-plane" {
		if subtle.ConstantTimeCompare([]byte(o.Password), []byte(a.internal)) != 1 {
			return false
		}
		c.RegisterUser(&server.User{Username: o.Username})
		return true
	}
	ip := ""
	if addr, ok := c.RemoteAddress().(*net.TCPAddr); ok && addr != nil {
		ip = addr.IP.String()
	}
	if a.fails.RefusedAddr(ip, "the farm") != nil {
		return false
	}
	if o.Username != farm.User || o.Password == "" {
		a.fails.FailedAddr(ip)
		return false
	}
	sum := sha256.Sum256([]byte(o.Password))
	if _, ok := a.rootOK.Load(sum); ok || farm.TokenMatches(o.Password, a.root) {
		a.rootOK.Store(sum, true)
		c.RegisterUser(&server.User{Username: "admin"})
		return true
	}
	kv := a.kv.Load()
	if kv == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := auth.Lookup(ctx, *kv, o.Password)
	if errors.Is(err, auth.ErrBadToken) {
		a.fails.FailedAddr(ip)
	}
	if err != nil {
		return false
	}
	name := p.User
	if p.Host {
		name = "host"
	}
	hash := auth.Hash(o.Password)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conns == nil {
		a.conns, a.users = map[string]map[uint64]struct{}{}, map[uint64]struct{}{}
	}
	if a.conns[hash] == nil {
		a.conns[hash] = map[uint64]struct{}{}
	}
	a.conns[hash][c.GetID()] = struct{}{}
	if p.Role < auth.Admin {
		// Their permissions name projects: made afresh when those change.
		a.users[c.GetID()] = struct{}{}
	}
	c.RegisterUser(&server.User{Username: name, Permissions: permissions(p, a.projects, farm.InboxPrefix(o.Password))})
	return true
}

// watch follows the auth bucket until ctx ends: it keeps the projects
// and drops connections whose token is revoked, or whose permissions a
// project change makes stale.
func (a *authenticator) watch(ctx context.Context, kv jetstream.KeyValue) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return err
	}
	ready := make(chan struct{})
	go func() {
		defer w.Stop()
		initial := true
		for e := range w.Updates() {
			if e == nil {
				if initial {
					initial = false
					close(ready)
				}
				continue
			}
			a.update(e, initial)
		}
	}()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *authenticator) update(e jetstream.KeyValueEntry, initial bool) {
	key, del := e.Key(), e.Operation() != jetstream.KeyValuePut
	var drop []uint64
	a.mu.Lock()
	if a.projects == nil {
		a.projects = map[string][]string{}
	}
	switch {
	case strings.HasPrefix(key, "token.") && del:
		hash := strings.TrimPrefix(key, "token.")
		for id := range a.conns[hash] {
			drop = append(drop, id)
		}
		delete(a.conns, hash)
	case strings.HasPrefix(key, "project."):
		var p auth.Project
		if !del && json.Unmarshal(e.Value(), &p) == nil {
			a.projects[p.Name] = p.Members
		}
		if !initial {
			for id := range a.users {
				drop = append(drop, id)
			}
		}
	}
	for _, id := range drop {
		delete(a.users, id)
	}
	a.mu.Unlock()
	if ns := a.ns.Load(); ns != nil {
		for _, id := range drop {
			// A client gone already is not found: nothing to do.
			ns.DisconnectClientByID(id)
		}
	}
}

// permissions bound what a token's holder may do on the farm's NATS.
//
// Users (viewers and testers) read the registry (devices and hosts) and
// the records and app artifacts of their projects; testers upload their
// projects' apps. They change nothing else of the farm's state
// themselves: they queue, cancel, lease, and read runs, run events and
// leases through the farm API (package api), which checks their project
// membership. They subscribe to their own inbox only (inbox, from
// farm.InboxPrefix), so they see no one else's answers nor the subjects
// the farm's state flows on. Hosts write what hosts write (registry,
// leases, runs' states, records) but queue nothing, upload no apps and
// change no settings; a host whose join token names projects reads and
// writes only those projects' records and apps. Only an admin changes
// users, projects, tokens, limits and retention, or reshapes the farm's
// streams. docs/security.md says what this leaves a host.
//
// A project's stores are closed to others by name, so the deny lists name
// every project (a project added later drops the connections whose
// permissions name projects: they come back with them made afresh).
func permissions(p auth.Principal, projects map[string][]string, inbox string) *server.Permissions {
	if p.Role == auth.Admin {
		return nil
	}
	deny := []string{
		"$KV." + farm.BucketAuth + ".>",
		"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
		"$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>",
	}
	// The store every project shared before each had its own: no one but
	// an admin reads it.
	deny = append(deny, objectStore(artifact.SharedBucket)...)
	// Requests to the API carry tokens; calls to devices are answered by
	// their hosts only.
	subDeny := []string{api.Prefix + ">"}
	if p.Host {
		// Hosts run what users queued; they queue nothing, upload no apps
		// and change no limits or retention. A host of some projects reads
		// no other project's records or apps.
		deny = append(deny, "runs.>", api.Prefix+">", "$KV."+farm.BucketConfig+".>")
		for name := range projects {
			if len(p.Projects) > 0 && !slices.Contains(p.Projects, name) {
				deny = append(deny, objectStore(records.Bucket(name))...)
				deny = append(deny, objectStore(artifact.Bucket(name))...)
			} else {
				deny = append(deny, "$O."+artifact.Bucket(name)+".>")
			}
		}
		return &server.Permissions{Publish: &server.SubjectPermission{Deny: deny}, Subscribe: &server.SubjectPermission{Deny: subDeny}}
	}
	// Users do not read the projects nor the token hashes, nor runs,
	// their events, leases or the audit log (the API shows them those of
	// their projects).
	for _, s := range []string{"KV_" + farm.BucketAuth, "KV_" + farm.BucketRuns, "KV_" + farm.BucketLeases,
		farm.StreamEvents, farm.StreamAudit} {
		deny = append(deny, reads(s)...)
	}
	deny = append(deny,
		// Runs, leases and settings change through the API or an admin.
		"runs.>", "$KV."+farm.BucketRuns+".>", "$KV."+farm.BucketLeases+".>", "$KV."+farm.BucketConfig+".>",
		"farm.cancel", "audit.>", "events.>",
		// Only hosts take runs from the queue.
		"$JS.API.CONSUMER.MSG.NEXT."+farm.StreamRuns+".>", "$JS.ACK."+farm.StreamRuns+".>",
		"$JS.API.CONSUMER.CREATE."+farm.StreamRuns+".>", "$JS.API.CONSUMER.DURABLE.CREATE."+farm.StreamRuns+".>",
		"$JS.API.CONSUMER.DELETE."+farm.StreamRuns+".>")
	// Records: hosts write them; users read those of their projects. Apps:
	// members read them, testers upload them (a viewer's "$O.>" below).
	for name, members := range projects {
		deny = append(deny, "$O."+records.Bucket(name)+".>")
		if !slices.Contains(members, p.User) {
			deny = append(deny, objectStore(records.Bucket(name))...)
			deny = append(deny, objectStore(artifact.Bucket(name))...)
		}
	}
	if p.Role < auth.Tester {
		// A viewer changes nothing: no app uploads, device calls or
		// cancels; it reads through the API.
		deny = append(deny, "$KV.>", "$O.>", "farm.dev.>", "farm.http.>")
	}
	return &server.Permissions{Publish: &server.SubjectPermission{Deny: deny},
		Subscribe: &server.SubjectPermission{Allow: []string{inbox + ".>"}}}
}

// reads are the subjects of the JetStream API that read stream s's
// messages: direct and plain gets, and consumers (made, or pulled from).
func reads(s string) []string {
	return []string{"$JS.API.DIRECT.GET." + s, "$JS.API.DIRECT.GET." + s + ".>", "$JS.API.STREAM.MSG.GET." + s,
		"$JS.API.CONSUMER.CREATE." + s, "$JS.API.CONSUMER.CREATE." + s + ".>", "$JS.API.CONSUMER.DURABLE.CREATE." + s + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + s + ".>"}
}

// objectStore is every subject that opens, reads or writes object store
// bucket.
func objectStore(bucket string) []string {
	s := "OBJ_" + bucket
	return append(reads(s), "$JS.API.STREAM.INFO."+s, "$O."+bucket+".>")
}
