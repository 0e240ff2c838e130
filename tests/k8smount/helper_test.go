// Upstream's test helpers: a volume laid out as kubelet mounts one.
//
// Copied from github.com/knadh/koanf, providers/k8smount/helper_test.go at
// commit 31dd449122a159ed38ac62fd48491cbb81902859 (2026-07-08), the
// k8smount provider v0.1.0. Changed: nothing but this header. The mock
// volume (mock/mount) is upstream's too.
//
// koanf is distributed under the MIT License:
//
// Copyright (c) 2019, Kailash Nadh. https://github.com/knadh
//
// Permission is hereby granted, free of charge, to any person obtaining a
// copy of this software and associated documentation files (the
// "Software"), to deal in the Software without restriction, including
// without limitation the rights to use, copy, modify, merge, publish,
// distribute, sublicense, and/or sell copies of the Software, and to permit
// persons to whom the Software is furnished to do so, subject to the
// following conditions:
//
// The above copyright notice and this permission notice shall be included
// in all copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
// OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
// MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
// NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
// DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
// OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
// USE OR OTHER DEALINGS IN THE SOFTWARE.
package k8smount_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const (
	mountTimeFmt = "..2006_01_02_15_04_05.0000000000"
	dataDir      = "..data"
)

// writeVolumeMount creates a file structure that matches how a ConfigMap or Secret will be mounted
// in a Kubernetes Pod.
//
// First, files are created for each data field. These exist within a timestamp-based directory,
// likely when the ConfigMap or Secret was last modified.
//
//	..2025_06_28_09_28_32.3151791122/
//	├── database_hostname
//	├── database_name
//	└── database_port
//
// A symlink is then created for "..data" to the directory containing the data:
//
//	..data -> ..2025_06_28_09_28_32.3151791122
//
// Finally, symlinks are created for the data files, via the "..data" symlink:
//
//	database_hostname -> ..data/database_hostname
//	database_name -> ..data/database_name
//	database_port -> ..data/database_port
func writeVolumeMount(tb testing.TB, mount string, data map[string]string) error {
	tb.Helper()

	return writeVolumeMountAt(tb, time.Now(), mount, data)
}

// writeVolumeMountAtTime creates a file structure that matches how a ConfigMap or Secret will be
// mounted in a Kubernetes Pod, using the given time. See writeVolumeMount for a detailed
// description of the resulting file structure.
//
// This function can be called multiple times with different times, with the most recent call taking
// precedence if any conflicts occur.
func writeVolumeMountAt(tb testing.TB, t time.Time, mount string, data map[string]string) error {
	tb.Helper()

	dir := t.UTC().Format(mountTimeFmt)
	dirPath := filepath.Join(mount, dir)

	for key, value := range data {
		if err := writeFile(tb, filepath.Join(dirPath, key), value); err != nil {
			return err
		}
	}

	tb.Chdir(mount)

	if err := os.Remove(dataDir); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("failed to cleanup existing symlink %s: %w", dataDir, err)
	}

	if err := os.Symlink(dir, dataDir); err != nil {
		return fmt.Errorf("failed to create %s symlink to %q: %w", "..data", dir, err)
	}

	tb.Log("created symlink: ..data ->", dir)

	for key := range data {
		target := filepath.Join(dataDir, key)

		if err := os.Remove(key); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("failed to cleanup existing symlink %s: %w", key, err)
		}

		if err := os.Symlink(target, key); err != nil {
			return fmt.Errorf("failed to create %q symlink to %q: %w", key, target, err)
		}

		tb.Log("created symlink:", key, "->", target)
	}

	return nil
}

func writeFile(tb testing.TB, path, content string) error {
	tb.Helper()

	dir := filepath.Dir(path)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create directory %q: %w", dir, err)
	}

	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("failed to create file %q: %w", path, err)
	}

	tb.Log("wrote:", path)

	return nil
}
