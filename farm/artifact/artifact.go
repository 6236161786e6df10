// Package artifact keeps app artifacts (APKs, IPAs, app bundles) for farm
// runs: each stored once in a JetStream object store by the SHA-256 of its
// content, named per project, and fetched by hosts into a bounded cache.
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

// Objects are "sha256/<hex>"; each name a project gives one is a link
// "name/<project key>/<name>" to it.
const (
	hashPrefix = "sha256/"
	namePrefix = "name/"
)

// Info describes a stored artifact.
type Info struct {
	Hash     string    `json:"hash"` // SHA-256, hex
	Name     string    `json:"name"`
	Project  string    `json:"project"`
	Kind     string    `json:"kind"` // apk, ipa, app (a zipped .app bundle)
	Size     uint64    `json:"size"`
	Uploaded time.Time `json:"uploaded"`
}

// Store reads and writes artifacts. Safe for concurrent use.
type Store struct {
	obs jetstream.ObjectStore
}

// Open opens the artifacts store on js (farm.Provision makes it).
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	obs, err := farm.ObjectStore(ctx, js, farm.BucketArtifacts, "app artifacts by SHA-256")
	if err != nil {
		return nil, err
	}
	return &Store{obs: obs}, nil
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

// Upload stores file once by its content's hash and names it name (default:
// the file's base name) in project. existed is true when the content was
// already stored (only the name is added then).
func (s *Store) Upload(ctx context.Context, file, project, name string) (info Info, existed bool, err error) {
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
	if project == "" {
		project = "default"
	}
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
	obj, err := s.obs.GetInfo(ctx, hashPrefix+hash)
	switch {
	case err == nil:
		existed = true
	case errors.Is(err, jetstream.ErrObjectNotFound):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Info{}, false, err
		}
		obj, err = s.obs.Put(ctx, jetstream.ObjectMeta{Name: hashPrefix + hash,
			Metadata: map[string]string{"kind": kind, "name": name, "project": project}}, f)
		if err != nil {
			return Info{}, false, fmt.Errorf("artifact: store %s: %w", file, err)
		}
	default:
		return Info{}, false, fmt.Errorf("artifact: look up %s: %w", hash, err)
	}
	if _, err := s.obs.AddLink(ctx, linkName(project, name), obj); err != nil {
		return Info{}, false, fmt.Errorf("artifact: name %s %s: %w", project, name, err)
	}
	return Info{Hash: hash, Name: name, Project: project, Kind: kind, Size: obj.Size, Uploaded: obj.ModTime}, existed, nil
}

func linkName(project, name string) string { return namePrefix + farm.Key(project) + "/" + name }

var hexHash = lazy.Regexp(`^[0-9a-f]{12,64}$`)

// ErrNotFound is an artifact reference nothing matches.
var ErrNotFound = errors.New("artifact: not found")

// Resolve finds the artifact ref names for project: its hash (or a unique
// prefix of 12 hex digits or more) or a name the project gave it.
func (s *Store) Resolve(ctx context.Context, project, ref string) (Info, error) {
	if project == "" {
		project = "default"
	}
	if link, err := s.obs.GetInfo(ctx, linkName(project, ref)); err == nil && link.Opts != nil && link.Opts.Link != nil {
		info, err := s.info(ctx, strings.TrimPrefix(link.Opts.Link.Name, hashPrefix))
		info.Name, info.Project = ref, project
		return info, err
	}
	if hexHash().MatchString(ref) {
		if len(ref) == 64 {
			return s.info(ctx, ref)
		}
		all, err := s.List(ctx, "")
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
	return Info{}, fmt.Errorf("%w: %q is no artifact name of project %s nor a stored hash (see apex farm app list)", ErrNotFound, ref, project)
}

func (s *Store) info(ctx context.Context, hash string) (Info, error) {
	o, err := s.obs.GetInfo(ctx, hashPrefix+hash)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Info{}, fmt.Errorf("%w: no artifact %s (upload it with apex farm app upload)", ErrNotFound, hash)
	}
	if err != nil {
		return Info{}, err
	}
	return infoOf(o), nil
}

func infoOf(o *jetstream.ObjectInfo) Info {
	return Info{Hash: strings.TrimPrefix(o.Name, hashPrefix), Name: o.Metadata["name"], Project: o.Metadata["project"],
		Kind: o.Metadata["kind"], Size: o.Size, Uploaded: o.ModTime}
}

// List returns the artifacts named in project (every stored artifact, by
// its first name, when project is empty), newest first.
func (s *Store) List(ctx context.Context, project string) ([]Info, error) {
	objs, err := s.obs.List(ctx)
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
	if project == "" {
		for _, o := range byHash {
			out = append(out, infoOf(o))
		}
	} else {
		prefix := namePrefix + farm.Key(project) + "/"
		for _, o := range objs {
			name, ok := strings.CutPrefix(o.Name, prefix)
			if !ok || o.Deleted || o.Opts == nil || o.Opts.Link == nil {
				continue
			}
			if target, ok := byHash[o.Opts.Link.Name]; ok {
				i := infoOf(target)
				i.Name, i.Project = name, project
				out = append(out, i)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Uploaded.After(out[j].Uploaded) })
	return out, nil
}

// download writes artifact hash to w.
func (s *Store) download(ctx context.Context, hash string, w io.Writer) error {
	res, err := s.obs.Get(ctx, hashPrefix+hash)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: no artifact %s (upload it with apex farm app upload)", ErrNotFound, hash)
	}
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(w, res)
	return err
}
