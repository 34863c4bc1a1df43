// Package wire is the transport contract between pservers and their clients:
// the gRPC options both ends must agree on (message sizes, windows,
// keepalive), the bulk message size, and the tensor codec that decodes pushes
// and pulls straight into their destination floats and sends them from where
// they lie (Loans).
//
// It lives apart from pserver (the server) and pserver/client so that
// neither side owns what both must match, and so the client's public API
// stays what callers use while the decoding hooks the server also needs
// (Sink, FloatBytes) have one home.
//
// It must not know the messages' meaning (which block goes where, steps,
// epochs): each side's Sink does.
package wire
