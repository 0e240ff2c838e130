// Package yamlparser parses YAML as koanf's parsers/yaml does, on the same
// YAML library, for the keepwatch command and the library's tests: the
// library's module requires no koanf module, so that projects on either
// koanf major can take it.
package yamlparser

import "go.yaml.in/yaml/v3"

// Parser is a file.Parser (and a koanf.Parser) for YAML, and so for JSON.
type Parser struct{}

// Unmarshal parses b into a map; empty input gives a nil map.
func (Parser) Unmarshal(b []byte) (map[string]any, error) {
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Marshal renders m as YAML.
func (Parser) Marshal(m map[string]any) ([]byte, error) { return yaml.Marshal(m) }
