module github.com/leasehold/leasehold

go 1.26

require github.com/cenkalti/backoff/v4 v4.3.0 // indirect
