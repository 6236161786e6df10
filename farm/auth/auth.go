// Package auth keeps the farm's users, projects and tokens in a JetStream
// KV bucket, and answers whether a user may do an action on a project.
//
// A user holds API tokens, each with a role (viewer, tester, admin); a
// project lists its members. Hosts join with join tokens, which are not
// users' tokens. Tokens are random (24 bytes) and kept only as their
// SHA-256: they are checked on every connection and console request, and
// their entropy makes a slow hash needless.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/audit"
	"github.com/apexagent/apex/farm/records"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/nats-io/nats.go/jetstream"
)

// Role is what a token may do; each role may do what the ones below it may.
type Role int

// Roles, weakest first.
const (
	Viewer Role = iota + 1 // sees devices, runs and records of its projects
	Tester                 // also queues and cancels runs, leases and drives devices
	Admin                  // also everything in every project, and manages users
)

var roleNames = map[Role]string{Viewer: "viewer", Tester: "tester", Admin: "admin"}

func (r Role) String() string { return roleNames[r] }

// ParseRole reads viewer, tester or admin.
func ParseRole(s string) (Role, error) {
	for r, n := range roleNames {
		if n == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("auth: role %q: use viewer, tester or admin", s)
}

func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	*r = v
	return err
}

// Action is what a request does to a project.
type Action string

// Actions and the role each needs.
const (
	View   Action = "view"   // list devices, runs, records
	Drive  Action = "drive"  // queue, cancel, lease, open a playground
	Manage Action = "manage" // manage users and projects, break leases
)

func (a Action) needs() Role {
	switch a {
	case View:
		return Viewer
	case Drive:
		return Tester
	}
	return Admin
}

// Principal is who a token speaks for. Host is set for a join token.
type Principal struct {
	User string `json:"user,omitempty"`
	Role Role   `json:"role,omitempty"`
	Host bool   `json:"host,omitempty"`
	// Projects are the projects whose runs a host takes (a join token's
	// --project); none: every project.
	Projects []string `json:"projects,omitempty"`
	// Token is the hash of the token that spoke, empty for the farm's
	// own --token: what a revocation names (Store.WatchRevoked).
	Token string `json:"-"`
}

// ErrForbidden matches (errors.Is) every refusal of Allow.
var ErrForbidden = errors.New("auth: forbidden")

// ErrBadToken is a token the farm does not know.
var ErrBadToken = errors.New("auth: unknown token")

// User is a person (or a CI job) with tokens.
type User struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// Project groups runs, records and devices (a device labelled
// project=NAME) for its members.
type Project struct {
	Name    string    `json:"name"`
	Members []string  `json:"members,omitempty"`
	Created time.Time `json:"created"`
}

// Token is a stored token: its hash, never the token.
type Token struct {
	Hash string `json:"hash"`
	User string `json:"user,omitempty"` // empty for a join token
	Role Role   `json:"role,omitempty"`
	Host bool   `json:"host,omitempty"`
	// Projects bound a join token's host to these projects' runs and
	// records; none: every project.
	Projects []string  `json:"projects,omitempty"`
	Created  time.Time `json:"created"`
	By       string    `json:"by,omitempty"`
}

// Store reads and writes the auth bucket. Safe for concurrent use.
type Store struct {
	js jetstream.JetStream
	kv jetstream.KeyValue
}

// Open opens the auth bucket.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, farm.BucketAuth)
	if err != nil {
		return nil, fmt.Errorf("auth: open %s: %w (is the control plane provisioned? is your token an admin's?)", farm.BucketAuth, err)
	}
	return &Store{js: js, kv: kv}, nil
}

var nameRE = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)

func checkName(kind, name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("auth: %s name %q: use letters, digits and _.@- (at most 64)", kind, name)
	}
	return nil
}

// AddUser records a new user.
func (s *Store) AddUser(ctx context.Context, name, actor string) error {
	if err := checkName("user", name); err != nil {
		return err
	}
	data, _ := json.Marshal(User{Name: name, Created: time.Now()})
	if _, err := s.kv.Create(ctx, "user."+farm.Key(name), data); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("auth: user %s exists already (apex farm user list)", name)
		}
		return fmt.Errorf("auth: add user %s: %w", name, err)
	}
	return audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminUserAdded, Actor: actor, Resource: "user/" + name})
}

// Users lists the users, by name.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	return list[User](ctx, s.kv, "user.", func(a, b User) bool { return a.Name < b.Name })
}

// AddProject records a new project with no members.
func (s *Store) AddProject(ctx context.Context, name, actor string) error {
	if err := checkName("project", name); err != nil {
		return err
	}
	data, _ := json.Marshal(Project{Name: name, Created: time.Now()})
	if _, err := s.kv.Create(ctx, "project."+farm.Key(name), data); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("auth: project %s exists already", name)
		}
		return fmt.Errorf("auth: add project %s: %w", name, err)
	}
	if err := projectStores(ctx, s.js, name); err != nil {
		return fmt.Errorf("auth: add project %s: %w", name, err)
	}
	return audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminProjectAdded, Actor: actor, Resource: "project/" + name})
}

// projectStores makes project's object stores: its records and its app
// artifacts. Where the farm has a --token only an admin creates streams,
// so they must exist before a host uploads a record or a tester an app.
func projectStores(ctx context.Context, js jetstream.JetStream, project string) error {
	if _, err := records.Create(ctx, js, project); err != nil {
		return fmt.Errorf("its records store: %w", err)
	}
	if _, err := artifact.Create(ctx, js, project); err != nil {
		return fmt.Errorf("its app artifacts store: %w", err)
	}
	return nil
}

// ProvisionProjects makes the object stores every project has (records,
// app artifacts) where they are missing: a farm whose projects were added
// before a kind of store existed gets it. The plane calls it at start.
func (s *Store) ProvisionProjects(ctx context.Context) error {
	projects, err := s.Projects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		if err := projectStores(ctx, s.js, p.Name); err != nil {
			return fmt.Errorf("auth: project %s: %w", p.Name, err)
		}
	}
	return nil
}

// Projects lists the projects, by name.
func (s *Store) Projects(ctx context.Context) ([]Project, error) {
	return list[Project](ctx, s.kv, "project.", func(a, b Project) bool { return a.Name < b.Name })
}

// Project reads one project.
func (s *Store) Project(ctx context.Context, name string) (Project, uint64, error) {
	data, rev, ok, err := farm.LeaderGet(ctx, s.js, farm.BucketAuth, "project."+farm.Key(name))
	if err != nil {
		return Project{}, 0, err
	}
	if !ok {
		return Project{}, 0, fmt.Errorf("auth: no project %s (apex farm project add %s)", name, name)
	}
	var p Project
	err = json.Unmarshal(data, &p)
	return p, rev, err
}

// AddMember makes user a member of project; both must exist.
func (s *Store) AddMember(ctx context.Context, project, user, actor string) error {
	if ok, err := s.hasUser(ctx, user); err != nil || !ok {
		return errors.Join(err, fmt.Errorf("auth: no user %s (apex farm user add %s)", user, user))
	}
	for {
		p, rev, err := s.Project(ctx, project)
		if err != nil {
			return err
		}
		if slices.Contains(p.Members, user) {
			return nil
		}
		p.Members = append(p.Members, user)
		sort.Strings(p.Members)
		data, _ := json.Marshal(p)
		_, err = s.kv.Update(ctx, "project."+farm.Key(project), data, rev)
		if err == nil {
			return audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminMemberAdded, Actor: actor, Resource: "project/" + project, Detail: user})
		}
		if !farm.Conflict(err) {
			return fmt.Errorf("auth: add %s to %s: %w", user, project, err)
		}
	}
}

func (s *Store) hasUser(ctx context.Context, user string) (bool, error) {
	_, _, ok, err := farm.LeaderGet(ctx, s.js, farm.BucketAuth, "user."+farm.Key(user))
	return ok, err
}

// newToken returns a random token with a prefix that tells its kind.
func newToken(prefix string) string {
	var b [24]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Hash is how a token is kept.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a new API token for user with role; the token is
// returned once and kept only as its hash.
func (s *Store) CreateToken(ctx context.Context, user string, role Role, actor string) (string, error) {
	if role < Viewer || role > Admin {
		return "", fmt.Errorf("auth: role %d: use viewer, tester or admin", role)
	}
	if ok, err := s.hasUser(ctx, user); err != nil || !ok {
		return "", errors.Join(err, fmt.Errorf("auth: no user %s (apex farm user add %s)", user, user))
	}
	t := newToken("apexu_")
	if err := s.putToken(ctx, Token{Hash: Hash(t), User: user, Role: role, Created: time.Now(), By: actor}); err != nil {
		return "", err
	}
	return t, audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminTokenCreated, Actor: actor, Resource: "user/" + user, Detail: role.String()})
}

// CreateJoinToken makes a new token hosts join the farm with. Its hosts
// take the runs of projects only, and write records only there; none
// means every project.
func (s *Store) CreateJoinToken(ctx context.Context, actor string, projects ...string) (string, error) {
	for _, p := range projects {
		if _, _, err := s.Project(ctx, p); err != nil {
			return "", err
		}
	}
	t := newToken("apexj_")
	if err := s.putToken(ctx, Token{Hash: Hash(t), Host: true, Projects: projects, Created: time.Now(), By: actor}); err != nil {
		return "", err
	}
	detail := t[:10] + "…"
	if len(projects) > 0 {
		detail += " for projects " + strings.Join(projects, ",")
	}
	return t, audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminJoinTokenCreated, Actor: actor, Detail: detail})
}

func (s *Store) putToken(ctx context.Context, t Token) error {
	data, _ := json.Marshal(t)
	if _, err := s.kv.Create(ctx, "token."+t.Hash, data); err != nil {
		return fmt.Errorf("auth: store token: %w", err)
	}
	return nil
}

// Verify returns whom token speaks for, or ErrBadToken.
func (s *Store) Verify(ctx context.Context, token string) (Principal, error) {
	return Lookup(ctx, s.kv, token)
}

// Lookup is Verify on an opened bucket (the control plane's authenticator
// has no Store).
func Lookup(ctx context.Context, kv jetstream.KeyValue, token string) (Principal, error) {
	if !strings.HasPrefix(token, "apexu_") && !strings.HasPrefix(token, "apexj_") {
		return Principal{}, ErrBadToken
	}
	e, err := kv.Get(ctx, "token."+Hash(token))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, fmt.Errorf("auth: check token: %w", err)
	}
	var t Token
	if err := json.Unmarshal(e.Value(), &t); err != nil {
		return Principal{}, fmt.Errorf("auth: token record: %w", err)
	}
	return Principal{User: t.User, Role: t.Role, Host: t.Host, Projects: t.Projects, Token: t.Hash}, nil
}

// Revoke deletes tokens (given as the tokens themselves) and every token
// of users, so that they stop working at once: the plane drops the NATS
// connections made with them, the farm API and the console refuse them
// (see WatchRevoked). It returns how many tokens it revoked.
func (s *Store) Revoke(ctx context.Context, tokens, users []string, actor string) (int, error) {
	var hashes []string
	for _, t := range tokens {
		hashes = append(hashes, Hash(t))
	}
	if len(users) > 0 {
		all, err := list[Token](ctx, s.kv, "token.", func(a, b Token) bool { return a.Hash < b.Hash })
		if err != nil {
			return 0, fmt.Errorf("auth: list tokens: %w", err)
		}
		for _, t := range all {
			if slices.Contains(users, t.User) {
				hashes = append(hashes, t.Hash)
			}
		}
	}
	n := 0
	for _, h := range hashes {
		e, err := s.kv.Get(ctx, "token."+h)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("auth: revoke a token: %w", err)
		}
		var t Token
		json.Unmarshal(e.Value(), &t)
		if err := s.kv.Delete(ctx, "token."+h); err != nil {
			return n, fmt.Errorf("auth: revoke a token: %w", err)
		}
		n++
		who := "user/" + t.User
		if t.Host {
			who = "join-token"
		}
		if err := audit.Log(ctx, s.js, audit.Event{Kind: audit.AdminTokenRevoked, Actor: actor, Resource: who, Detail: h[:12]}); err != nil {
			return n, err
		}
	}
	if n == 0 {
		return 0, errors.New("auth: no such token (it may be revoked already)")
	}
	return n, nil
}

// WatchRevoked calls fn with the hash of each token revoked from now on,
// until ctx ends.
func (s *Store) WatchRevoked(ctx context.Context, fn func(hash string)) error {
	w, err := s.kv.Watch(ctx, "token.*", jetstream.UpdatesOnly())
	if err != nil {
		return fmt.Errorf("auth: watch tokens: %w", err)
	}
	go func() {
		defer w.Stop()
		for e := range w.Updates() {
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				fn(strings.TrimPrefix(e.Key(), "token."))
			}
		}
	}()
	return nil
}

// Allow answers whether p may do action a on project: an admin may do
// anything; anyone else needs a role that allows a and to be a member of
// project. A host (join token) may do nothing here: it drives devices,
// not projects. It fails with an error wrapping ErrForbidden that says
// what to ask for.
func (s *Store) Allow(ctx context.Context, p Principal, a Action, project string) error {
	if p.Role == Admin {
		return nil
	}
	if p.Host || p.User == "" {
		return fmt.Errorf("%w: a host's join token cannot %s project %s", ErrForbidden, a, project)
	}
	if p.Role < a.needs() {
		article := "a"
		if a.needs() == Admin {
			article = "an"
		}
		return fmt.Errorf("%w: %s is a %s and cannot %s project %s: that needs %s %s token (ask an admin: apex farm token create --user %s --role %s)",
			ErrForbidden, p.User, p.Role, a, project, article, a.needs(), p.User, a.needs())
	}
	pr, _, err := s.Project(ctx, project)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrForbidden, err)
	}
	if !slices.Contains(pr.Members, p.User) {
		return fmt.Errorf("%w: %s is not a member of project %s: to %s it, a %s must be a member (ask an admin: apex farm project member add %s %s)",
			ErrForbidden, p.User, project, a, a.needs(), project, p.User)
	}
	return nil
}

func list[T any](ctx context.Context, kv jetstream.KeyValue, prefix string, less func(a, b T) bool) ([]T, error) {
	keys, err := kv.ListKeysFiltered(ctx, prefix+"*")
	if err != nil {
		return nil, err
	}
	var out []T
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var v T
		if json.Unmarshal(e.Value(), &v) == nil {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out, nil
}
