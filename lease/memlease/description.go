package memlease

import (
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what memlease's store is (driver.Store), registered for
// leasehold check and help: a store in this process, which needs no
// permission and costs nothing.
var Description = driver.Store{
	Scheme:     Scheme,
	Name:       "memory",
	Judge:      lease.JudgedByContender,
	Conditions: "the in-process store applies every condition under one lock",
	Price:      driver.Price{Service: "memory", Renew: "write", Poll: "read"},
}
