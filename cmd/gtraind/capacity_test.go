package main

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/gtrain/gtrain/daemon"
)

func TestCapacityConfig(t *testing.T) {
	tests := []struct {
		args    []string
		want    daemon.Config
		wantErr string
	}{
		{nil, daemon.Config{GPUs: -1, Labels: map[string]string{}}, ""},
		{[]string{"--cpu", "3.5", "--memory", "8Gi", "--gpus", "2", "--labels", "zone=a, disk=ssd"},
			daemon.Config{CPU: 3.5, Memory: 8 << 30, GPUs: 2, Labels: map[string]string{"zone": "a", "disk": "ssd"}}, ""},
		{[]string{"--memory", "lots"}, daemon.Config{}, `--memory: invalid memory quantity "lots"`},
		{[]string{"--labels", "zone"}, daemon.Config{}, `--labels: "zone" is not key=value`},
	}
	for _, tt := range tests {
		f := pflag.NewFlagSet("agent", pflag.ContinueOnError)
		addCapacityFlags(f)
		if err := f.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		v := viper.New()
		if err := v.BindPFlags(f); err != nil {
			t.Fatal(err)
		}
		var got daemon.Config
		err := capacityConfig(v, &got)
		if tt.wantErr != "" {
			if !errors.Is(err, errUsage) || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want a usage error with %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.CPU != tt.want.CPU || got.Memory != tt.want.Memory || got.GPUs != tt.want.GPUs || !maps.Equal(got.Labels, tt.want.Labels) {
			t.Errorf("%v: config %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
}
