module example.com/v1service

go 1.16

require (
	github.com/knadh/koanf v1.5.0
	github.com/stretchr/testify v1.8.1
	go.uber.org/goleak v1.1.12
)
