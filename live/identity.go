package live

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"reflect"

	"github.com/knadh/koanf/v2"
)

// MinIdentityKeySize is the shortest IdentityKey a live config takes: a
// shorter key could be guessed along with the config.
const MinIdentityKeySize = 16

var errShortKey = fmt.Errorf("identity key shorter than %d bytes", MinIdentityKeySize)

// identity says how the Identity of a config is made: under a key shared
// by the replicas, plainly, or not at all.
type identity struct {
	key   []byte
	plain bool
}

func (id identity) check() error {
	if id.key != nil && len(id.key) < MinIdentityKeySize {
		return errShortKey
	}
	return nil
}

// comparable reports whether the config has an Identity to compare
// replicas by.
func (id identity) comparable() bool { return id.key != nil || id.plain }

// of returns the Identity of k; "" if none is asked for.
func (id identity) of(k *koanf.Koanf) string {
	var h hash.Hash
	var kind string
	switch {
	case id.key != nil:
		h, kind = hmac.New(sha256.New, id.key), "hmac-sha256:"
	case id.plain:
		h, kind = sha256.New(), "sha256:"
	default:
		return ""
	}
	h.Write(Canonical(k))
	return kind + hex.EncodeToString(h.Sum(nil))
}

// Canonical returns the bytes an Identity is the hash of: the JSON of the
// config, json.Marshal(k.Raw()), with its keys sorted at every level, as
// encoding/json writes maps. They depend on what the config holds, not on
// the files it came from, their names, comments or layout, nor on the
// process, so replicas that load the same ConfigMap agree on them, and a
// restart does not change them.
//
// A value that JSON cannot hold is written in its place as a JSON string:
// a NaN or infinite float as "NaN", "+Inf" or "-Inf", a complex number as
// fmt prints it, a func, a channel or an unsafe pointer (which no parser
// makes) as its Go type, a map with keys other than strings with its keys
// as fmt prints them, sorted.
func Canonical(k *koanf.Koanf) []byte {
	raw := k.Raw()
	if b, err := json.Marshal(raw); err == nil {
		return b
	}
	b, err := json.Marshal(jsonable(reflect.ValueOf(raw)))
	if err != nil {
		// jsonable leaves nothing JSON refuses; a MarshalJSON of the
		// application's that fails is said so, and the same each time.
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// jsonable returns v with what JSON cannot hold replaced as Canonical
// says; what it can is left to encoding/json.
func jsonable(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if _, ok := v.Interface().(json.Marshaler); ok {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return jsonable(v.Elem())
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "+Inf"
		case math.IsInf(f, -1):
			return "-Inf"
		}
		return f
	case reflect.Complex64, reflect.Complex128:
		return fmt.Sprint(v.Complex())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.Type().String()
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface() // base64, as JSON writes []byte
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonable(v.Index(i))
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		for _, key := range v.MapKeys() {
			name := fmt.Sprint(key.Interface())
			if key.Kind() == reflect.String {
				name = key.String()
			}
			out[name] = jsonable(v.MapIndex(key))
		}
		return out
	case reflect.Struct:
		// A struct of the application's (a structs provider): JSON writes
		// its exported fields, or its TextMarshaler.
		if _, err := json.Marshal(v.Interface()); err == nil {
			return v.Interface()
		}
		return v.Type().String()
	}
	return v.Interface()
}
