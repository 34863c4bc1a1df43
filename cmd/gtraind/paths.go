package main

import (
	"github.com/gtrain/gtrain/daemon"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// addPathFlags is the agent's confinement of job paths (docs/reference.md#gtraind, README
// "Confined paths and limits").
func addPathFlags(f *pflag.FlagSet) {
	f.StringArray("allowed-path", nil, "a directory job specs may name data, checkpoint and model paths under, "+
		"besides --data-dir and the spec file's own directory (repeatable; config key allowed-path: a list; env GTRAIN_ALLOWED_PATH: comma-separated)")
}

// readPathSettings reads --allowed-path: repeated flags, a YAML list in the
// config file, or a comma-separated GTRAIN_ALLOWED_PATH.
func readPathSettings(v *viper.Viper, cfg *daemon.Config) {
	if s, ok := v.Get("allowed-path").(string); ok {
		cfg.AllowedPaths = splitList(s)
		return
	}
	cfg.AllowedPaths = v.GetStringSlice("allowed-path")
}
