package file

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// merge is koanf's maps.Merge; tests/koanf checks the two agree on many
// inputs. These are the cases that say what it does.
func TestMergeIsKoanfsMerge(t *testing.T) {
	inner := map[string]any{"x": 1}
	for _, tc := range []struct {
		name     string
		src, dst map[string]any
		want     map[string]any
	}{
		{"a new key is added", map[string]any{"b": 2}, map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}},
		{"a scalar replaces", map[string]any{"a": 2}, map[string]any{"a": 1}, map[string]any{"a": 2}},
		{"maps merge, recursively",
			map[string]any{"m": map[string]any{"y": 2, "n": map[string]any{"q": 2}}},
			map[string]any{"m": map[string]any{"x": 1, "y": 1, "n": map[string]any{"p": 1}}},
			map[string]any{"m": map[string]any{"x": 1, "y": 2, "n": map[string]any{"p": 1, "q": 2}}}},
		{"a list replaces, never appends", map[string]any{"l": []any{3}}, map[string]any{"l": []any{1, 2}}, map[string]any{"l": []any{3}}},
		{"a map replaces a scalar", map[string]any{"a": inner}, map[string]any{"a": 1}, map[string]any{"a": inner}},
		{"a scalar replaces a map", map[string]any{"a": 1}, map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": 1}},
		{"nil replaces", map[string]any{"a": nil}, map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": nil}},
		{"a map of another type replaces a map",
			map[string]any{"a": map[any]any{"y": 2}}, map[string]any{"a": map[string]any{"x": 1}},
			map[string]any{"a": map[any]any{"y": 2}}},
		{"an empty map merges into a map, changing nothing",
			map[string]any{"a": map[string]any{}}, map[string]any{"a": map[string]any{"x": 1}},
			map[string]any{"a": map[string]any{"x": 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merge(tc.src, tc.dst)
			assert.Equal(t, tc.want, tc.dst)
		})
	}
}

// A key new to dst takes src's value itself, not a copy: a later merge
// into dst changes that map of src's, as koanf's does. Read parses each
// file anew, so no caller sees it.
func TestMergeSharesWhatItAdds(t *testing.T) {
	first := map[string]any{"m": map[string]any{"x": 1}}
	out := map[string]any{}
	merge(first, out)
	merge(map[string]any{"m": map[string]any{"y": 2}}, out)
	assert.Equal(t, map[string]any{"x": 1, "y": 2}, first["m"])
}
