package live_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/keepwatch/file"
	"github.com/keepwatch/file/live"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// credentials are two files of a Secret that must agree.
type credentials struct{ user, token string }

// A Value whose Build reads a set's raw files needs no Load: each change
// is read once, one generation, and a bad one keeps the value in force.
func TestAValueBuiltFromRawFiles(t *testing.T) {
	v := newVolume(t, filepath.Join(t.TempDir(), "creds"), map[string]string{"user": "u1", "token": "t1"})
	secret := file.Set(v.v.Dir, []string{"user", "token"}, nil, file.WithLogger(testLogger(t)))
	var reported errorLog
	creds := start(t, &live.Value[credentials]{
		Watch: []live.Watcher{secret},
		Build: func(*koanf.Koanf) (credentials, error) {
			files, err := secret.ReadFiles() // in a reload on change: what the change delivered
			if err != nil {
				return credentials{}, err
			}
			return credentials{user: string(files["user"]), token: string(files["token"])}, nil
		},
		Validate: func(c credentials) error {
			if c.user[1:] != c.token[1:] {
				return errors.New("user and token are of different generations")
			}
			return nil
		},
		OnError: reported.add,
		Logger:  testLogger(t),
	})
	require.Equal(t, credentials{"u1", "t1"}, creds.Get())
	for i := 2; i <= 20; i++ {
		v.update(map[string]string{"user": fmt.Sprint("u", i), "token": fmt.Sprint("t", i)})
	}
	waitValue(t, creds, func(c credentials) bool { return c.user == "u20" })
	assert.Empty(t, reported.all(), "no reload ever met two generations")

	v.update(map[string]string{"user": "u21", "token": "t0"})
	errs := reported.waitLen(t, 1)
	assert.ErrorIs(t, errs[0], live.ErrRejected)
	assert.Equal(t, credentials{"u20", "t20"}, creds.Get())
}
