// Package checkpoint identifies a model checkpoint on disk: a digest of its config.json
// and weight files, so that two runs can say whether they served the same weights when
// the server itself reports no digest (vLLM's /v1/models gives only the path it loaded,
// its "root"). Hashing gigabytes takes seconds, so each file's SHA-256 is cached by
// path, size and modification time.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// patterns are the files that make a checkpoint's weights: the model's config and its
// tensors, in the formats servers load. Tokenizer and generation files are left out.
var patterns = []string{"config.json", "*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf"}

// Digest is "sha256:<hex>" over the checkpoint directory's config.json and weight files
// (each file's name, size and SHA-256, in name order): equal digests mean the same
// weights. cacheFile keeps each file's SHA-256 between calls ("" caches nothing); Hashed
// says how many bytes had to be read this time.
func Digest(dir, cacheFile string) (digest string, hashed int64, err error) {
	files, err := checkpointFiles(dir)
	if err != nil {
		return "", 0, err
	}
	mu.Lock()
	defer mu.Unlock()
	c := openCache(cacheFile)
	h := sha256.New()
	for _, f := range files {
		sum, n, err := c.fileSum(f)
		if err != nil {
			return "", hashed, err
		}
		hashed += n
		fmt.Fprintf(h, "%s\x00%d\x00%s\n", filepath.Base(f.path), f.size, sum)
	}
	if err := c.save(); err != nil {
		return "", hashed, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), hashed, nil
}

// CacheFile is where Digest's cache lives by default: planrun/weights.json in the
// user's cache directory ($XDG_CACHE_HOME, ~/.cache); "" when there is none.
func CacheFile() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "planrun", "weights.json")
}

// IsCheckpoint reports whether dir is a local directory with a config.json: a
// checkpoint Digest can identify.
func IsCheckpoint(dir string) bool {
	if !filepath.IsAbs(dir) {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "config.json"))
	return err == nil && st.Mode().IsRegular()
}

type file struct {
	path  string
	size  int64
	mtime int64
}

func checkpointFiles(dir string) ([]file, error) {
	var out []file
	for _, p := range patterns {
		paths, _ := filepath.Glob(filepath.Join(dir, p))
		for _, path := range paths {
			st, err := os.Stat(path)
			if err != nil {
				return nil, err
			}
			if st.Mode().IsRegular() {
				out = append(out, file{path, st.Size(), st.ModTime().UnixNano()})
			}
		}
	}
	if !slices.ContainsFunc(out, func(f file) bool { return filepath.Base(f.path) == "config.json" }) {
		return nil, fmt.Errorf("%s: no config.json: not a model checkpoint directory", dir)
	}
	if len(out) == 1 {
		return nil, fmt.Errorf("%s: no weight files (%s)", dir, strings.Join(patterns[1:], ", "))
	}
	slices.SortFunc(out, func(a, b file) int { return strings.Compare(filepath.Base(a.path), filepath.Base(b.path)) })
	return out, nil
}

// mu serialises the cache file's read-modify-write within one process (cells probe
// their servers one at a time, but tests run in parallel).
var mu sync.Mutex

type cache struct {
	path    string
	sums    map[string]string // "path size mtime_ns" → hex SHA-256
	changed bool
}

func openCache(path string) *cache {
	c := &cache{path: path, sums: map[string]string{}}
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			json.Unmarshal(b, &c.sums) // a damaged cache is rebuilt
		}
	}
	return c
}

func (c *cache) fileSum(f file) (sum string, hashed int64, err error) {
	key := f.path + " " + strconv.FormatInt(f.size, 10) + " " + strconv.FormatInt(f.mtime, 10)
	if s, ok := c.sums[key]; ok {
		return s, 0, nil
	}
	r, err := os.Open(f.path)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, fmt.Errorf("%s: %w", f.path, err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	for k := range c.sums {
		if strings.HasPrefix(k, f.path+" ") {
			delete(c.sums, k) // the file's earlier contents
		}
	}
	c.sums[key], c.changed = sum, true
	return sum, n, nil
}

// save writes the cache back when it learnt a sum, through a temporary file and a
// rename so that another planrun never reads half of it.
func (c *cache) save() error {
	if c.path == "" || !c.changed {
		return nil
	}
	b, err := json.MarshalIndent(c.sums, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	tmp := c.path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}
