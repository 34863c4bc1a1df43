package jobspec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Bounds of env (docs/reference.md#job-spec).
const (
	MaxEnvVars     = 64
	MaxEnvValueLen = 4096
)

// EnvDenied are the variables a spec's env may not set: the C library's
// and dynamic loader's hooks (every LD_* name, EnvDeniedPrefixes; the
// loader's search path LD_LIBRARY_PATH included; GCONV_PATH, LOCPATH and
// GLIBC_TUNABLES load or steer code too), which would run code of the
// caller's choice in whatever process the environment reaches, and the
// variables gtrain sets itself (the thread counts follow
// resources.trainer.cpu; the Go runtime's follow the role's request;
// CUDA_VISIBLE_DEVICES pins the GPUs placement gave the role, and a spec
// that set it would reach GPUs another role holds).
// Names starting with an EnvDeniedPrefixes entry are gtrain's own too.
var (
	EnvDenied = []string{"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH",
		"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOMAXPROCS", "GOMEMLIMIT", "GOGC", "GODEBUG",
		"CUDA_VISIBLE_DEVICES"}
	EnvDeniedPrefixes = []string{"LD_", "GTRAIN_", "GCTL_"}
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// IsPathList reports whether env variable name holds a list of
// directories (PATH, LD_LIBRARY_PATH, PYTHONPATH, ...): each must be
// absolute and, at submit, under the agent's allowed paths.
func IsPathList(name string) bool { return strings.HasSuffix(name, "PATH") }

// EnvPaths lists the directories of the env's path lists, with the field
// that names each ("env.PATH"), in name order.
func (s *Spec) EnvPaths() []struct{ Field, Path string } {
	var out []struct{ Field, Path string }
	for _, name := range s.envNames() {
		if IsPathList(name) {
			for _, p := range strings.Split(s.Env[name], ":") {
				out = append(out, struct{ Field, Path string }{"env." + name, p})
			}
		}
	}
	return out
}

func (s *Spec) envNames() []string {
	names := make([]string, 0, len(s.Env))
	for n := range s.Env {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// EnvList is the env as NAME=VALUE entries in name order.
func (s *Spec) EnvList() []string {
	var out []string
	for _, n := range s.envNames() {
		out = append(out, n+"="+s.Env[n])
	}
	return out
}

func (s *Spec) validateEnv() *FieldError {
	if len(s.Env) == 0 {
		return nil
	}
	if !s.Model.IsProgram() {
		return fieldError("env", fmt.Sprintf("reaches the job's model program, and model.kind %s runs none: remove env", s.Model.Kind), nil)
	}
	if len(s.Env) > MaxEnvVars {
		return fieldError("env", fmt.Sprintf("sets %d variables, at most %d", len(s.Env), MaxEnvVars), nil)
	}
	for _, name := range s.envNames() {
		field, value := "env."+name, s.Env[name]
		if !envName.MatchString(name) {
			return fieldError(field, "is not a variable name: letters, digits and _, not starting with a digit, at most 128", nil)
		}
		if slices.Contains(EnvDenied, name) || slices.ContainsFunc(EnvDeniedPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			return fieldError(field, fmt.Sprintf("may not be set: the loader's and C library's hooks (LD_*, %s) and gtrain's own variables (%s*, the thread counts, the Go runtime's, CUDA_VISIBLE_DEVICES: placement pins a role's GPUs) are denied",
				strings.Join(EnvDenied[3:6], ", "), strings.Join(EnvDeniedPrefixes[1:], "*, ")), nil)
		}
		if len(value) > MaxEnvValueLen || strings.ContainsRune(value, 0) {
			return fieldError(field, fmt.Sprintf("value of %d bytes: at most %d, and no NUL byte", len(value), MaxEnvValueLen), nil)
		}
		if IsPathList(name) {
			for _, p := range strings.Split(value, ":") {
				if !filepath.IsAbs(p) {
					return fieldError(field, fmt.Sprintf("%q is not an absolute directory; a path list takes absolute directories separated by ':'", p), nil)
				}
			}
		}
	}
	return nil
}
