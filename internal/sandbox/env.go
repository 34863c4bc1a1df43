package sandbox

import "strings"

// passEnv are the variables of the caller's environment a sandboxed
// program keeps: where to find commands, the locale and time zone, the GPUs
// placement pinned, and the OpenBLAS kernels an operator pinned in the
// agent's environment (OPENBLAS_CORETYPE: the role computes with them, and
// a program's OpenBLAS, PyTorch's too, must compute with the same; without
// it a program's ran other kernels than its trainer's). Everything else
// (GTRAIN_ETCD_PASSWORD, the agent's paths, a developer's shell) stays out;
// the caller adds the job's own env and the thread counts after this.
var passEnv = map[string]bool{
	"PATH": true, "LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true, "TZ": true,
	"CUDA_VISIBLE_DEVICES": true, "OPENBLAS_CORETYPE": true,
}

// FilterEnv keeps the allow-listed NAME=VALUE entries of env and sets HOME
// and TMPDIR to home. A missing PATH gets a plain system one.
func FilterEnv(env []string, home string) []string {
	out := make([]string, 0, len(passEnv)+2)
	hasPath := false
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !passEnv[name] {
			continue
		}
		hasPath = hasPath || name == "PATH"
		out = append(out, kv)
	}
	if !hasPath {
		out = append(out, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	return append(out, "HOME="+home, "TMPDIR="+home)
}
