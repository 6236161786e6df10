package plane

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/auth"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// authenticator lets a client in with the farm's --token (an admin), a
// user's API token (its role's permissions) or a join token (a host's),
// and the plane's own connection with its internal password.
type authenticator struct {
	root, internal string
	kv             atomic.Pointer[jetstream.KeyValue] // the auth bucket, once provisioned
	// rootOK holds the SHA-256 of presented root tokens that matched: a
	// hashed --token costs a bcrypt check each time.
	rootOK sync.Map
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
	if o.Username != farm.User || o.Password == "" {
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
	if err != nil {
		return false
	}
	name := p.User
	if p.Host {
		name = "host"
	}
	c.RegisterUser(&server.User{Username: name, Permissions: permissions(p)})
	return true
}

// permissions bound what a token's holder may publish on the farm's NATS.
// Roles are enforced here; project membership is enforced where requests
// name a project (the console and its front door, auth.Store.Allow).
func permissions(p auth.Principal) *server.Permissions {
	if p.Role == auth.Admin {
		return nil
	}
	// Nobody but an admin changes users, projects and tokens, or reshapes
	// the farm's streams.
	deny := []string{
		"$KV." + farm.BucketAuth + ".>",
		"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
		"$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>",
	}
	if !p.Host {
		// Hosts read projects to check membership (auth.Store.Allow);
		// users do not read them, nor the token hashes.
		deny = append(deny,
			"$JS.API.DIRECT.GET.KV_"+farm.BucketAuth+".>", "$JS.API.DIRECT.GET.KV_"+farm.BucketAuth,
			"$JS.API.STREAM.MSG.GET.KV_"+farm.BucketAuth,
			"$JS.API.CONSUMER.CREATE.KV_"+farm.BucketAuth+".>", "$JS.API.CONSUMER.CREATE.KV_"+farm.BucketAuth)
	}
	if p.Host {
		// Hosts run what users queued; they queue nothing.
		deny = append(deny, "runs.>")
	} else {
		// Only hosts take runs from the queue and report on them.
		deny = append(deny, "$JS.API.CONSUMER.MSG.NEXT."+farm.StreamRuns+".>", "$JS.ACK."+farm.StreamRuns+".>",
			"$JS.API.CONSUMER.CREATE."+farm.StreamRuns+".>", "$JS.API.CONSUMER.DURABLE.CREATE."+farm.StreamRuns+".>",
			"$JS.API.CONSUMER.DELETE."+farm.StreamRuns+".>", "events.>")
	}
	if !p.Host && p.Role < auth.Tester {
		// A viewer changes nothing: no runs, leases, device calls or cancels.
		deny = append(deny, "runs.>", "$KV.>", "$O.>", "farm.>", "audit.>")
	}
	return &server.Permissions{Publish: &server.SubjectPermission{Deny: deny}}
}
