package rolecfg

import (
	"reflect"
	"strings"
	"testing"
)

// Every field of Common the command line carries comes from the field of
// Args of the same name; only the log and the metrics come from elsewhere.
func TestArgsCommon(t *testing.T) {
	var a Args
	fill(t, reflect.ValueOf(&a).Elem(), "", "x", new(int))
	c := reflect.ValueOf(a.Common(nil, nil))
	for i := 0; i < c.NumField(); i++ {
		name := c.Type().Field(i).Name
		if name == "Log" || name == "Metrics" {
			continue
		}
		from := reflect.ValueOf(a).FieldByName(name)
		if !from.IsValid() || !reflect.DeepEqual(from.Interface(), c.Field(i).Interface()) {
			t.Errorf("Common.%s = %v, want Args.%s (%v)", name, c.Field(i), name, from)
		}
	}
}

func TestCommonValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Common
		want string
	}{
		{Common{Job: "fit", SessionTTL: 1}, ""},
		{Common{SessionTTL: 1}, "pserver: Job must be set"},
		{Common{Job: "fit"}, "pserver: SessionTTL must be >= 1, got 0"},
	} {
		err := tc.c.Validate("pserver")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}
