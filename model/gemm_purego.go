//go:build !(cgo && openblas)

package model

// Without cgo or OpenBLAS (make build uses it when pkg-config finds
// Debian's libopenblas-dev) the models multiply with gonum's pure-Go
// float32 kernels: about 8× slower (12 against 100 GFLOP/s on one core
// here), and within the tolerance of TestPureGoMatchesFastKernels.
var fastGemm sgemm = pureGoGemm

// Kernels names the matrix-multiply library in use.
func Kernels() string { return "gonum pure-Go" }

// BetterKernels is OpenBLAS's: pure Go has none to choose.
func BetterKernels() (better, chose string) { return "", "" }

// KernelWarning is OpenBLAS's: pure Go has none to give.
func KernelWarning() string { return "" }

// PinNote is OpenBLAS's: pure Go has no kernels to pin.
func PinNote() string { return "" }
