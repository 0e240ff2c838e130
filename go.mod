module github.com/keepwatch/file

go 1.25.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/sys v0.32.0
)
