//go:build !linux

package main

import "errors"

// The batches command reads inotify.
const roleBatchWriter = "batch-writer"

func runBatches([]string) error {
	return errors.New("the batches command is Linux only")
}

func runBatchWriter([]string) error {
	return errors.New("the batches command is Linux only")
}
