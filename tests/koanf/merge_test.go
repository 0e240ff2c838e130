package koanf_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/keepwatch/file"
	"github.com/knadh/koanf/maps"
	"github.com/stretchr/testify/require"
)

// A set merges its files as koanf's maps.Merge merges maps, the same code
// in koanf v1.5.0 and in the module koanf/maps v0.1.2 of v2: the root
// package has its own copy, to import no koanf module. Both merge the same
// generated files here, and must agree on every case: nested maps over
// scalars and the reverse, lists, nils, maps of another key type, empty
// maps, keys shared and not.
func TestASetMergesAsKoanfDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	dir := t.TempDir()
	for c := range 500 {
		var (
			names  []string
			parsed = map[string]map[string]any{} // each file's content, as its parser gives it
		)
		for i := range 1 + rng.IntN(4) {
			name := fmt.Sprintf("%d.conf", i)
			names = append(names, name)
			content := fmt.Sprintf("case %d, file %d", c, i)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			parsed[content] = randomMap(rng, 3)
		}
		// Each merge gets maps of its own: both change what they merge.
		p := fixedParser(parsed)
		want := map[string]any{}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			require.NoError(t, err)
			m, _ := p.Unmarshal(b)
			maps.Merge(m, want)
		}
		got, err := file.Set(dir, names, p).Read()
		require.NoError(t, err)
		require.Equal(t, want, got, "case %d: files %v", c, parsed)
	}
}

// fixedParser gives each file's content the map it holds, a fresh copy at
// each call, as a parser parses anew.
type fixedParser map[string]map[string]any

func (p fixedParser) Unmarshal(b []byte) (map[string]any, error) {
	m, ok := p[string(b)]
	if !ok {
		return nil, fmt.Errorf("no map for %q", b)
	}
	return deepCopy(m).(map[string]any), nil
}

func (fixedParser) Marshal(map[string]any) ([]byte, error) { return nil, nil }

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// randomMap makes a map of a few keys from a small alphabet, so that
// files share keys, with values of every kind a parser gives.
func randomMap(rng *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range rng.IntN(4) {
		m[string(rune('a'+rng.IntN(3)))] = randomValue(rng, depth)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	kind := rng.IntN(7)
	if depth == 0 {
		kind = rng.IntN(3)
	}
	switch kind {
	case 0:
		return rng.IntN(3)
	case 1:
		return fmt.Sprint("s", rng.IntN(3))
	case 2:
		return nil
	case 3:
		return []any{rng.IntN(3), randomMap(rng, depth-1)}
	case 4:
		return map[any]any{"x": rng.IntN(3)}
	}
	return randomMap(rng, depth-1)
}
