package file

// merge merges src into dst, as koanf's maps.Merge does (the same code in
// koanf v1.5.0 and in the module github.com/knadh/koanf/maps of v2), so
// that a set read here merges its files exactly as koanf would merge them
// loaded one by one. The root package imports no koanf module, so that
// projects on either koanf major can take it; tests/koanf checks this copy
// against koanf's on the same inputs.
//
// A key of src missing from dst is set to src's value, shared, not copied.
// Where both hold a map[string]any under a key, the two merge, recursively;
// anything else of src's (a list, a scalar, a map of another type) takes
// the key's place. dst's maps are changed in place, and so may be maps of
// src that an earlier merge put into dst.
func merge(src, dst map[string]any) {
	for key, val := range src {
		dv, ok := dst[key]
		if !ok {
			dst[key] = val
			continue
		}
		sm, ok := val.(map[string]any)
		if !ok {
			dst[key] = val
			continue
		}
		if dm, ok := dv.(map[string]any); ok {
			merge(sm, dm)
		} else {
			dst[key] = val
		}
	}
}
