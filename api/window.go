package api

// MasterWindow is the fixed flow-control window of the connections to a
// master (the master's server and the trainers' clients set it): a fixed
// window turns off gRPC's bandwidth estimation, which pings the peer as data
// arrives, two more packets per step report on a connection that never has
// more than a few KiB in flight.
const MasterWindow = 1 << 20
