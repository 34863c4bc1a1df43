package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/jobspec"
)

// addCapacityFlags declares what the node offers to placement (docs/reference.md#gtraind-agent).
func addCapacityFlags(f *pflag.FlagSet) {
	f.Float64("cpu", 0, "CPUs this node offers to placement (0: the machine's, detected)")
	f.String("memory", "", `memory this node offers to placement, e.g. "64Gi" (empty: the machine's, detected)`)
	f.Int("gpus", -1, "GPUs this node offers to placement (-1: the NVIDIA devices found, detected)")
	f.String("labels", "", "labels of this node, key=value,... (shown in gctl node list -o json)")
}

// capacityConfig fills cfg's capacity from the flags, environment and
// config file that v holds; a value that cannot be read is a usage error.
func capacityConfig(v *viper.Viper, cfg *daemon.Config) error {
	cfg.CPU = v.GetFloat64("cpu")
	cfg.GPUs = v.GetInt("gpus")
	if m := v.GetString("memory"); m != "" {
		n, err := (jobspec.Resource{Memory: m}).MemoryBytes()
		if err != nil {
			return fmt.Errorf("%w: --memory: %v", errUsage, err)
		}
		cfg.Memory = n
	}
	labels, err := parseLabels(v.GetString("labels"))
	if err != nil {
		return fmt.Errorf("%w: --labels: %v", errUsage, err)
	}
	cfg.Labels = labels
	return nil
}

// parseLabels reads "zone=a,disk=ssd".
func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for _, pair := range splitList(s) {
		k, val, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not key=value; give labels as key=value,key2=value2", pair)
		}
		labels[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return labels, nil
}
