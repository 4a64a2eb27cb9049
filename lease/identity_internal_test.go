package lease

import "testing"

func TestDefaultIdentity(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"ECS Fargate", map[string]string{"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/8f03e41243824aea923aca126495f665-3681984407"},
			"ecs-8f03e41243824aea923aca126495f665"},
		{"ECS on EC2", map[string]string{"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/0206b271-b33f-47ab-86c6-a0ba208a70a9"},
			"ecs-0206b271-b33f-47ab-86c6-a0ba208a70a9"},
		{"ECS v3 only", map[string]string{"ECS_CONTAINER_METADATA_URI": "http://169.254.170.2/v3/8f03e41243824aea923aca126495f665-1/"},
			"ecs-8f03e41243824aea923aca126495f665"},
		{"ECS without a path", map[string]string{"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/"}, "host-42"},
		{"Azure Container Apps", map[string]string{"CONTAINER_APP_REPLICA_NAME": "reconciler--x1y2z3-5d8f7c9b6-abcde"},
			"reconciler--x1y2z3-5d8f7c9b6-abcde"},
		{"Azure App Service", map[string]string{"WEBSITE_INSTANCE_ID": "a1b2c3"}, "azure-a1b2c3"},
		{"ECS wins", map[string]string{"WEBSITE_INSTANCE_ID": "a1b2c3",
			"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/8f03e41243824aea923aca126495f665-1"}, "ecs-8f03e41243824aea923aca126495f665"},
		{"elsewhere", nil, "host-42"},
		{"odd bytes", map[string]string{"CONTAINER_APP_REPLICA_NAME": "r\u00e9plica 1"}, "r__plica_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := defaultIdentity(func(k string) string { return tc.env[k] }, "host", 42)
			if got != tc.want {
				t.Fatalf("identity %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDefaultIdentityIsValid(t *testing.T) {
	if err := ValidateIdentity(DefaultIdentity()); err != nil {
		t.Fatal(err)
	}
}
