package rolecfg

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/coord"
	"github.com/spf13/pflag"
)

// awkward are values a field may hold that a command line could mangle.
var awkward = []string{"plain", "with space", "-dash", "--job", "a=b", "comma,inside", "ünï\tcode", "0"}

// fill sets every field of a (nested structs included) but Worker and
// Etcd.Endpoints to a value of its own derived from s, so that a field Argv
// leaves out or Parse reads into another field does not come back. A field
// of a kind it does not know fails the test: teach fill, Argv and Flags.
func fill(t *testing.T, v reflect.Value, path, s string, n *int) {
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), path+v.Type().Field(i).Name
		*n++
		switch {
		case name == "Worker" || name == "Etcd.Endpoints":
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("%s%d", s, *n))
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(*n) * 1001)
		case f.Kind() == reflect.Bool:
			f.SetBool(true) // false is the default: true must travel
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{fmt.Sprintf("%s%d", s, *n), s}))
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Int:
			f.Set(reflect.ValueOf([]int{*n % 1024, 0}))
		case f.Kind() == reflect.Struct:
			fill(t, f, name+".", s, n)
		default:
			t.Fatalf("Args.%s is a %s: teach fill (and Argv, Flags) about it", name, f.Kind())
		}
	}
}

func environ(env []string) func(string) string {
	return func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
}

func roundTrip(t *testing.T, a Args) Args {
	t.Helper()
	argv, err := a.Argv()
	if err != nil {
		t.Fatalf("Argv(%+v): %v", a, err)
	}
	got, err := Parse(argv, environ([]string{EtcdPasswordEnv + "=" + a.Etcd.Password})) // a role run by hand
	if err != nil {
		t.Fatalf("Parse(%q): %v", argv, err)
	}
	return got
}

// What the agent writes, a role reads back: every field, whatever it holds.
func TestArgsRoundTrip(t *testing.T) {
	for _, worker := range []string{"master", "pserver-3", "trainer-12"} {
		for _, s := range awkward {
			a := Args{Worker: worker}
			fill(t, reflect.ValueOf(&a).Elem(), "", s, new(int))
			a.Etcd.Endpoints = []string{"http://10.0.0.1:2379", "[fd00::1]:2379"}
			if got := roundTrip(t, a); !reflect.DeepEqual(got, a) {
				t.Errorf("wrote %+v\nread  %+v", a, got)
			}
		}
	}
}

// Each field alone comes back, and a field the agent leaves zero takes the
// flag's default.
func TestArgsOneFieldAtATime(t *testing.T) {
	var full Args
	fill(t, reflect.ValueOf(&full).Elem(), "", "x", new(int))
	full.Etcd.Endpoints = []string{"e:2379"}
	want := Defaults()
	want.Worker = "trainer-0"
	if got := roundTrip(t, Args{Worker: "trainer-0"}); !reflect.DeepEqual(got, want) {
		t.Errorf("an Args with only Worker reads back as %+v, want the defaults %+v", got, want)
	}
	each(reflect.ValueOf(&full).Elem(), "", func(name string, v reflect.Value) {
		a := Defaults()
		a.Worker = "pserver-1"
		field(reflect.ValueOf(&a).Elem(), name).Set(v)
		if got := roundTrip(t, a); !reflect.DeepEqual(got, a) {
			t.Errorf("with only %s set: wrote %+v\nread  %+v", name, a, got)
		}
	})
}

// each calls fn with the path and value of every leaf field of v.
func each(v reflect.Value, path string, fn func(string, reflect.Value)) {
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), path+v.Type().Field(i).Name
		if f.Kind() == reflect.Struct {
			each(f, name+".", fn)
		} else if name != "Worker" {
			fn(name, f)
		}
	}
}

func field(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}

func TestArgv(t *testing.T) {
	a := Args{Worker: "trainer-1", Job: "fit", JobRev: 42, DataDir: "/data", Node: "n1"}
	a.Etcd.Endpoints, a.Etcd.Password = []string{"http://127.0.0.1:2379", "http://10.0.0.2:2379"}, "s3cret"
	got, err := a.Argv()
	want := []string{"trainer", "--job", "fit", "--job-rev", "42", "--data-dir", "/data", "--node", "n1",
		"--etcd-endpoints", "http://127.0.0.1:2379,http://10.0.0.2:2379", "--index", "1"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Argv = %q, %v; want %q", got, err, want)
	}
	a.EtcdPasswordFile = EtcdPasswordPath("/data")
	if got, _ := a.Argv(); !slices.Contains(got, "/data/etcd-password") || slices.ContainsFunc(got, func(w string) bool { return strings.Contains(w, "s3cret") }) {
		t.Errorf("Argv = %q: want the password's file, never the password", got)
	}
	for _, bad := range []Args{
		{Worker: "trainer-01"},
		{Worker: "coach-0"},
		{Worker: "master", Etcd: etcdAt("a:1,b:2")},
		{Worker: "master", Etcd: etcdAt(" a:1")},
		{Worker: "master", Etcd: etcdAt("")},
	} {
		if argv, err := bad.Argv(); err == nil {
			t.Errorf("Argv(%+v) = %q, want an error: it would not read back", bad, argv)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, argv := range [][]string{
		nil,
		{"trainer", "--index", "-1"},
		{"coach", "--job", "fit"},
		{"master", "--index", "0"},
		{"master", "stray"},
		{"pserver", "--job-rev", "x"},
	} {
		if a, err := Parse(argv, environ(nil)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", argv, a)
		}
	}
}

// The agent's etcd and TLS flags are the roles' own: one name, type and
// meaning each.
func TestAccessFlagsAreTheRoles(t *testing.T) {
	agent, role := pflag.NewFlagSet("agent", pflag.ContinueOnError), pflag.NewFlagSet("trainer", pflag.ContinueOnError)
	var a Args
	AddAccessFlags(agent, &a.Etcd, &a.TLS)
	Flags(role, "trainer")
	agent.VisitAll(func(f *pflag.Flag) {
		r := role.Lookup(f.Name)
		if r == nil || r.Usage != f.Usage || r.Value.Type() != f.Value.Type() {
			t.Errorf("the agent's --%s is not the roles' (%+v)", f.Name, r)
		}
	})
}

func etcdAt(endpoint string) (e coord.EtcdConfig) {
	e.Endpoints = []string{endpoint}
	return e
}
