package lease

import (
	"net/url"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ecsSegment is the last path segment of ECS_CONTAINER_METADATA_URI_V4 on
// Fargate: the task ID, a dash, and a number for the container. Compiled
// when first used, not at every process's start (its counted repetition
// compiles into 32 copies of the class: 14 KB at init, issue 38).
var ecsSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{32})-[0-9]+$`) })

// DefaultIdentity returns an identity for Options.Identity that is unique
// among the instances of a program and that a person can trace back to one,
// from the process's environment:
//
//   - on Amazon ECS, "ecs-" and the task ID, taken from the path of
//     ECS_CONTAINER_METADATA_URI_V4 (or ECS_CONTAINER_METADATA_URI), which
//     is .../v4/TASKID-NNN on Fargate; where the path holds a container ID
//     instead (EC2 launch type), that ID;
//   - on Azure Container Apps, CONTAINER_APP_REPLICA_NAME;
//   - on Azure App Service, "azure-" and WEBSITE_INSTANCE_ID;
//   - elsewhere, the host name and the process ID: "web-3-4711".
//
// Spaces and bytes that an identity cannot hold become '_', and it is cut
// at 200 bytes. The leasehold command uses it when --identity is not given.
func DefaultIdentity() string {
	host, _ := os.Hostname()
	return defaultIdentity(os.Getenv, host, os.Getpid())
}

// defaultIdentity is DefaultIdentity for the environment getenv reads, on
// the host and in the process given.
func defaultIdentity(getenv func(string) string, hostname string, pid int) string {
	for _, v := range []string{"ECS_CONTAINER_METADATA_URI_V4", "ECS_CONTAINER_METADATA_URI"} {
		if id := ecsTaskID(getenv(v)); id != "" {
			return sanitizeIdentity("ecs-" + id)
		}
	}
	if replica := getenv("CONTAINER_APP_REPLICA_NAME"); replica != "" {
		return sanitizeIdentity(replica)
	}
	if instance := getenv("WEBSITE_INSTANCE_ID"); instance != "" {
		return sanitizeIdentity("azure-" + instance)
	}
	if hostname == "" {
		hostname = "leasehold"
	}
	return sanitizeIdentity(hostname + "-" + strconv.Itoa(pid))
}

// ecsTaskID returns the task ID in an ECS container metadata URI, the last
// path segment if it is not one, or "" if uri has no path.
func ecsTaskID(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" || u.Path == "/" {
		return ""
	}
	seg := path.Base(strings.TrimSuffix(u.Path, "/"))
	if m := ecsSegment().FindStringSubmatch(seg); m != nil {
		return m[1]
	}
	if seg == "." || seg == "/" || seg == "v4" || seg == "v3" {
		return ""
	}
	return seg
}

// sanitizeIdentity makes s a valid identity: printable ASCII, other bytes
// replaced by '_', at most 200 bytes.
func sanitizeIdentity(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x21 || c > 0x7e {
			b[i] = '_'
		}
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
