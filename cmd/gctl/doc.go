// Command gctl is the operator CLI of gtrain (docs/reference.md#gctl): it submits and
// monitors jobs, lists jobs, workers and nodes, drains and undrains nodes,
// streams logs, stops jobs and converts raw data into record shards.
//
// It owns the user-facing command line: commands, flags, help texts, the
// choice of table or JSON output (the tables, status page, charts and ETA
// are drawn by internal/render), exit codes (0 ok, 1 failure, 2 rejected input; mapped in
// errors.go only) and the client configuration file
// (~/.gtrain/config.yaml, with named contexts).
//
// It talks to a gtrain agent only through the gRPC Control service of
// package api, and reuses package jobspec (parse and validate a job spec
// locally before submitting) and package dataset (data convert). It must not
// reach into etcd, the master, pservers or trainers, and it must not hold any
// cluster logic: whatever the agent reports is printed as it is.
//
// cobra and viper are used here and nowhere else in gtrain.
package main
