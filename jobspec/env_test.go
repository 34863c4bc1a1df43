package jobspec

import "testing"

func TestEnvValidation(t *testing.T) {
	base := "name: j\nmodel: {kind: program, entry: python3 m.py, workspace: /w, inputs: 2, outputs: 1}\ndata: {train: /d/train-*}\n"
	checkFieldCases(t, base, []fieldCase{
		{"", ""},
		{"env: {MY_FLAG: '1', MY_LIBPATH: /opt/lib:/usr/local/lib}\n", ""},
		{"env: {LD_PRELOAD: /tmp/x.so}\n", "env.LD_PRELOAD"},
		{"env: {LD_LIBRARY_PATH: /opt/lib}\n", "env.LD_LIBRARY_PATH"},
		{"env: {LD_BIND_NOW: '1'}\n", "env.LD_BIND_NOW"},
		{"env: {GCONV_PATH: /opt/gconv}\n", "env.GCONV_PATH"},
		{"env: {GLIBC_TUNABLES: glibc.malloc.check=3}\n", "env.GLIBC_TUNABLES"},
		{"env: {LOCPATH: /opt/locale}\n", "env.LOCPATH"},
		{"env: {GTRAIN_BIN: /x}\n", "env.GTRAIN_BIN"},
		{"env: {OMP_NUM_THREADS: '8'}\n", "env.OMP_NUM_THREADS"},
		{"env: {CUDA_VISIBLE_DEVICES: '0'}\n", "env.CUDA_VISIBLE_DEVICES"},
		{"env: {1BAD: x}\n", "env.1BAD"},
		{"env: {PYTHONPATH: 'lib:/opt'}\n", "env.PYTHONPATH"},
	})
	err := parseValidate("name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: /d/train-*}\nenv: {A: b}\n")
	wantFieldError(t, err, "env", "program")
}
