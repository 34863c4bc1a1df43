// Package region is the shared memory through which a trainer and a pserver
// of the same host move a PushPull's tensors instead of the socket: the
// trainer creates a sealed memfd (Create), hands it to the pserver over a
// unix socket beside the pserver's gRPC socket (Attach, Registry), and its
// pushes then name the region and carry no data: the pserver copies the
// gradient out of the region's first half and writes the next step's
// parameters into its second. Through gRPC each 4 MB of a step went through
// about five copies (gRPC's buffers, the kernel's two, the decode); through
// the region, one on each side. The pserver keeps a region while its
// trainer's attach connection stays open (Attachment), so a trainer that
// exits leaves nothing mapped, and a trainer sees its pserver exit.
//
// It owns the memfds, their mappings and the attach exchange. It must not
// know blocks, steps or the push protocol (pserver and pserver/client do),
// and a region is only ever a shortcut: a trainer whose region is refused
// or lost pushes through the socket, as before.
package region
