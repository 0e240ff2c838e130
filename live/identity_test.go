package live_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var replicaKey = []byte("0123456789abcdef-shared-by-replicas")

// replica starts a live config on its own kubelet volume holding data, as
// one pod of a Deployment would, under key.
func replica(t *testing.T, key []byte, data string) (*live.Config, *volume) {
	t.Helper()
	v := newVolume(t, filepath.Join(t.TempDir(), "config"), map[string]string{"app.yaml": data})
	f := provider(t, filepath.Join(v.v.Dir, "app.yaml"))
	c := start(t, &live.Config{Name: "app", Load: loadYAML(f), Watch: []live.Watcher{f}, Validate: positivePort,
		IdentityKey: key, Logger: testLogger(t)})
	return c, v
}

// Replicas that run the same config show the same Identity, whatever the
// layout of their files (comments, key order, their node's generation
// names); a replica on another config shows another. A push the replica
// rejects leaves the Identity of the config in force, not of the file.
func TestReplicasOnTheSameConfigShareAnIdentity(t *testing.T) {
	a, _ := replica(t, replicaKey, "port: 8080\nroles: {alice: [read]}\n")
	b, vb := replica(t, replicaKey, "# pushed by CI\nroles:\n  alice: [read]\nport: 8080\n")
	id := a.Stats().Identity
	assert.Regexp(t, `^hmac-sha256:[0-9a-f]{64}$`, id)
	assert.Equal(t, id, b.Stats().Identity, "same config, same identity")

	vb.update(map[string]string{"app.yaml": "port: 0\n"}) // rejected
	require.Eventually(t, func() bool { return b.Stats().Rejected == 1 }, waitFor, tick)
	assert.Equal(t, id, b.Stats().Identity, "the config in force, not the file read")

	vb.update(map[string]string{"app.yaml": "port: 8081\nroles: {alice: [read]}\n"})
	waitKoanf(t, b, func(k *koanf.Koanf) bool { return k.Int("port") == 8081 })
	assert.NotEqual(t, id, b.Stats().Identity, "another config, another identity")

	vb.update(map[string]string{"app.yaml": "port: 8080\nroles: {alice: [read]}\n"})
	waitKoanf(t, b, func(k *koanf.Koanf) bool { return k.Int("port") == 8080 })
	assert.Equal(t, id, b.Stats().Identity, "converged")
}

// The Identity is the HMAC of Canonical, and Canonical is the JSON of the
// config: fixed bytes, so that a restart, another machine or a later
// version of keepwatch gives the same Identity for the same config.
func TestTheIdentityIsTheHMACOfTheConfigsJSON(t *testing.T) {
	c, _ := replica(t, replicaKey, "port: 8080\nroles: {bob: [read, write], alice: [read]}\nratio: 0.5\n")
	canonical := `{"port":8080,"ratio":0.5,"roles":{"alice":["read"],"bob":["read","write"]}}`
	assert.Equal(t, canonical, string(live.Canonical(c.Koanf())))
	m := hmac.New(sha256.New, replicaKey)
	m.Write([]byte(canonical))
	assert.Equal(t, "hmac-sha256:"+hex.EncodeToString(m.Sum(nil)), c.Stats().Identity)
	// Pinned (openssl dgst -sha256 -hmac KEY agrees): a change here changes
	// every deployed replica's identity.
	assert.Equal(t, "hmac-sha256:51511ed02c7b5125a632f951c004dca0fb3e60856f2018a63dfbe9b4a0b8b2d6", c.Stats().Identity)
}

// Without a key there is no Identity; PlainIdentity gives the plain
// SHA-256, for configs that hold no secret; a key too short to resist a
// guess is refused.
func TestIdentityWithoutAKey(t *testing.T) {
	src := &source{data: "port: 1\n"}
	c := start(t, &live.Config{Load: loadYAML(src), Watch: []live.Watcher{src}, Logger: testLogger(t)})
	assert.Empty(t, c.Stats().Identity)

	p := start(t, &live.Config{Load: loadYAML(src), Watch: []live.Watcher{src}, PlainIdentity: true, Logger: testLogger(t)})
	sum := sha256.Sum256([]byte(`{"port":1}`))
	assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), p.Stats().Identity)

	short := &live.Config{Load: loadYAML(src), IdentityKey: []byte("short"), Logger: testLogger(t)}
	assert.EqualError(t, short.Start(), "keepwatch: config live.Config: identity key shorter than 16 bytes", "the error names the config")
	assert.Zero(t, short.Stats().Published)
}

// Values that JSON cannot hold still make fixed bytes.
func TestCanonicalOfValuesJSONCannotHold(t *testing.T) {
	k := koanf.New(".")
	require.NoError(t, k.Load(mapProvider(map[string]any{
		"nan": math.NaN(), "inf": math.Inf(-1), "c": complex(1, 2), "f": func() {},
		"m": map[int]string{2: "b", 1: "a"}, "b": []byte("hi"), "n": nil,
	}), nil))
	want := `{"b":"aGk=","c":"(1+2i)","f":"func()","inf":"-Inf","m":{"1":"a","2":"b"},"n":null,"nan":"NaN"}`
	assert.Equal(t, want, string(live.Canonical(k)))
	assert.Equal(t, want, string(live.Canonical(k)), "the same each time")
}

// mapProvider gives koanf a map as it is, as a structs or confmap
// provider would.
type mapProvider map[string]any

func (m mapProvider) ReadBytes() ([]byte, error)    { return nil, errors.New("mapProvider: use Read") }
func (m mapProvider) Read() (map[string]any, error) { return m, nil }
