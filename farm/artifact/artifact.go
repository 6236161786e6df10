// Package artifact keeps app artifacts (APKs, IPAs, app bundles) for farm
// runs: each project's in a JetStream object store of its own, stored once
// by the SHA-256 of their content and named by the project, and fetched by
// hosts into a bounded cache.
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/internal/lazy"
	"github.com/nats-io/nats.go/jetstream"
)

// Each project keeps its artifacts in an object store of its own (Bucket):
// objects are "sha256/<hex>", stored once per content in the project; each
// name the project gives one is a link "name/<name>" to it.
const (
	hashPrefix   = "sha256/"
	namePrefix   = "name/"
	bucketPrefix = "farm_artifacts_"
)

// SharedBucket is the one store every project's artifacts shared before
// each project had its own. A farm upgraded from then keeps it but reads
// nothing from it (only an admin may): its artifacts are uploaded again.
const SharedBucket = "farm_artifacts"

// Bucket is the object store keeping project's artifacts.
func Bucket(project string) string { return bucketPrefix + farm.Key(project) }

// Create opens project's artifacts store, creating it if it is missing.
// The admin adding a project calls it (auth.Store.AddProject), and the
// plane for every project at start: where the farm has a --token only an
// admin creates streams, so testers upload into a store made for them.
func Create(ctx context.Context, js jetstream.JetStream, project string) (jetstream.ObjectStore, error) {
	return farm.ObjectStore(ctx, js, Bucket(project), "app artifacts of project "+project+" by SHA-256")
}

// Info describes a stored artifact.
type Info struct {
	Hash     string    `json:"hash"` // SHA-256, hex
	Name     string    `json:"name"`
	Project  string    `json:"project"`
	Kind     string    `json:"kind"` // apk, ipa, app (a zipped .app bundle)
	Size     uint64    `json:"size"`
	Uploaded time.Time `json:"uploaded"`
}

// Store reads and writes the artifacts of the projects its connection's
// token may (the plane's permissions decide: a project's members and the
// hosts running its runs). Every call works inside one project: nothing
// resolves or lists across projects. Safe for concurrent use.
type Store struct {
	js jetstream.JetStream
}

// New is the artifacts of the farm on js.
func New(js jetstream.JetStream) *Store { return &Store{js: js} }

func defaultProject(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// bucket opens project's store (creating it when create is set).
func (s *Store) bucket(ctx context.Context, project string, create bool) (jetstream.ObjectStore, error) {
	if create {
		return Create(ctx, s.js, project)
	}
	obs, err := farm.ExistingObjectStore(ctx, s.js, Bucket(project))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("%w: project %s has no apps (upload them with apex farm app upload --project %s; %s)", ErrNotFound, project, project, uploadAgain)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: the apps of project %s: %w", project, err)
	}
	return obs, nil
}

// Kind is what an artifact file is, by its name: apk, ipa or app.
func Kind(file string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(file)); ext {
	case ".apk":
		return "apk", nil
	case ".ipa":
		return "ipa", nil
	case ".zip":
		if strings.HasSuffix(strings.ToLower(strings.TrimSuffix(file, filepath.Ext(file))), ".app") {
			return "app", nil
		}
	}
	return "", fmt.Errorf("artifact %s: give an .apk, an .ipa or a zipped app bundle (NAME.app.zip)", filepath.Base(file))
}

// validName is what a project may call an artifact.
var validName = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$`)

// Upload stores file in project once by its content's hash and names it
// name (default: the file's base name). existed is true when the project
// had the content already (only the name is added then).
func (s *Store) Upload(ctx context.Context, file, proj, name string) (info Info, existed bool, err error) {
	kind, err := Kind(file)
	if err != nil {
		return Info{}, false, err
	}
	if name == "" {
		name = filepath.Base(file)
	}
	if !validName().MatchString(name) {
		return Info{}, false, fmt.Errorf("artifact name %q: use letters, digits and _.+- (up to 128)", name)
	}
	proj = defaultProject(proj)
	f, err := os.Open(file)
	if err != nil {
		return Info{}, false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Info{}, false, fmt.Errorf("artifact: read %s: %w", file, err)
	}
	hash := hex.EncodeToString(h.Sum(nil))
	obs, err := s.bucket(ctx, proj, true)
	if err != nil {
		return Info{}, false, err
	}
	// A token that may read the project's apps but not upload them (a
	// viewer's) is refused by the server, not in an answer: fail then,
	// rather than when ctx ends.
	dctx, denied := farm.WatchDenied(ctx, s.js.Conn(), "$O."+Bucket(proj)+".")
	obj, existed, err := put(dctx, obs, f, hash, kind, name)
	if d := denied(); d != nil {
		return Info{}, false, fmt.Errorf("artifact: upload %s into project %s: %w (uploading needs a tester's token of the project: ask an admin)", file, proj, d)
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("artifact: upload %s into project %s: %w", file, proj, err)
	}
	return Info{Hash: hash, Name: name, Project: proj, Kind: kind, Size: obj.Size, Uploaded: obj.ModTime}, existed, nil
}

var hexHash = lazy.Regexp(`^[0-9a-f]{12,64}$`)

// uploadAgain ends a not-found error: a farm upgraded from one shared
// store finds none of the apps it kept.
const uploadAgain = "apps uploaded before each project had its own store are not found: upload them again"

// ErrNotFound is an artifact reference nothing matches.
var ErrNotFound = errors.New("artifact: not found")

// put stores f (hash) in obs unless it has it, and names it name.
func put(ctx context.Context, obs jetstream.ObjectStore, f io.ReadSeeker, hash, kind, name string) (obj *jetstream.ObjectInfo, existed bool, err error) {
	obj, err = obs.GetInfo(ctx, hashPrefix+hash)
	switch {
	case err == nil:
		existed = true
	case errors.Is(err, jetstream.ErrObjectNotFound):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, false, err
		}
		obj, err = obs.Put(ctx, jetstream.ObjectMeta{Name: hashPrefix + hash, Metadata: map[string]string{"kind": kind, "name": name}}, f)
		if err != nil {
			return nil, false, err
		}
	default:
		return nil, false, fmt.Errorf("look up %s: %w", hash, err)
	}
	if _, err := obs.AddLink(ctx, namePrefix+name, obj); err != nil {
		return nil, false, fmt.Errorf("name it %s: %w", name, err)
	}
	return obj, existed, nil
}

// Resolve finds the artifact ref names in project: its hash (or a unique
// prefix of 12 hex digits or more) or a name the project gave it. Another
// project's artifact is not found, whatever its hash.
func (s *Store) Resolve(ctx context.Context, proj, ref string) (Info, error) {
	proj = defaultProject(proj)
	obs, err := s.bucket(ctx, proj, false)
	if err != nil {
		return Info{}, err
	}
	if link, err := obs.GetInfo(ctx, namePrefix+ref); err == nil && link.Opts != nil && link.Opts.Link != nil {
		info, err := lookup(ctx, obs, proj, strings.TrimPrefix(link.Opts.Link.Name, hashPrefix))
		info.Name = ref
		return info, err
	}
	if hexHash().MatchString(ref) {
		if len(ref) == 64 {
			return lookup(ctx, obs, proj, ref)
		}
		all, err := list(ctx, obs, proj)
		if err != nil {
			return Info{}, err
		}
		var match []Info
		for _, a := range all {
			if strings.HasPrefix(a.Hash, ref) && (len(match) == 0 || match[0].Hash != a.Hash) {
				match = append(match, a)
			}
		}
		if len(match) == 1 {
			return match[0], nil
		}
		if len(match) > 1 {
			return Info{}, fmt.Errorf("artifact %s: %d artifacts start so: give more of the hash", ref, len(match))
		}
	}
	return Info{}, fmt.Errorf("%w: %q is no artifact name or hash of project %s (see apex farm app list --project %s; %s)", ErrNotFound, ref, proj, proj, uploadAgain)
}

func lookup(ctx context.Context, obs jetstream.ObjectStore, project, hash string) (Info, error) {
	o, err := obs.GetInfo(ctx, hashPrefix+hash)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Info{}, fmt.Errorf("%w: project %s has no artifact %s (upload it with apex farm app upload --project %s)", ErrNotFound, project, hash, project)
	}
	if err != nil {
		return Info{}, err
	}
	return infoOf(o, project), nil
}

func infoOf(o *jetstream.ObjectInfo, project string) Info {
	return Info{Hash: strings.TrimPrefix(o.Name, hashPrefix), Name: o.Metadata["name"], Project: project,
		Kind: o.Metadata["kind"], Size: o.Size, Uploaded: o.ModTime}
}

// List returns the artifacts project named, newest first: one per name
// (an artifact named twice is listed twice).
func (s *Store) List(ctx context.Context, proj string) ([]Info, error) {
	proj = defaultProject(proj)
	obs, err := s.bucket(ctx, proj, false)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return list(ctx, obs, proj)
}

func list(ctx context.Context, obs jetstream.ObjectStore, project string) ([]Info, error) {
	objs, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byHash := map[string]*jetstream.ObjectInfo{}
	for _, o := range objs {
		if strings.HasPrefix(o.Name, hashPrefix) && !o.Deleted {
			byHash[o.Name] = o
		}
	}
	var out []Info
	for _, o := range objs {
		name, ok := strings.CutPrefix(o.Name, namePrefix)
		if !ok || o.Deleted || o.Opts == nil || o.Opts.Link == nil {
			continue
		}
		if target, ok := byHash[o.Opts.Link.Name]; ok {
			i := infoOf(target, project)
			i.Name = name
			out = append(out, i)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Uploaded.After(out[j].Uploaded) })
	return out, nil
}

// download writes artifact hash of project to w.
func (s *Store) download(ctx context.Context, project, hash string, w io.Writer) error {
	obs, err := s.bucket(ctx, project, false)
	if err != nil {
		return err
	}
	res, err := obs.Get(ctx, hashPrefix+hash)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: project %s has no artifact %s (upload it with apex farm app upload --project %s)", ErrNotFound, project, hash, project)
	}
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(w, res)
	return err
}
