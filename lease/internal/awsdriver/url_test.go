package awsdriver

import (
	"slices"
	"testing"
)

func TestParams(t *testing.T) {
	t.Parallel()
	got := Params("use_path_style", "key_attribute")
	want := []string{"anonymous", "dualstack", "endpoint", "fips", "hostname_immutable", "key_attribute", "profile", "region", "role", "use_path_style"}
	if !slices.Equal(got, want) {
		t.Errorf("Params(use_path_style, key_attribute) = %v, want %v", got, want)
	}
	if len(ConfigParams) != 8 {
		t.Errorf("Params changed ConfigParams to %v", ConfigParams)
	}
}
