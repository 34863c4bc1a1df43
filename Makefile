# gtrain — see README.md. Two commands a newcomer needs: `make demo` and `make test`.
GO        ?= go
BIN       := bin
# The pserver's optimizer loops and the models' element-wise passes use AVX2
# through Go's simd/archsimd package (bit-identical to the scalar loops, which
# builds without it still use).
export GOEXPERIMENT := simd
# The models multiply with OpenBLAS (Debian's libopenblas-dev, found by
# pkg-config; .ci/run installs it) through gonum's netlib bindings; without
# it every go command here builds gonum's pure-Go float32 kernels, about 8×
# slower, and says so (model.Kernels, in the trainer's log).
ifeq ($(shell pkg-config --exists openblas 2>/dev/null && echo yes),yes)
export GOFLAGS := $(strip $(GOFLAGS) -tags=openblas)
endif
.PHONY: all build test test-short fuzz demo bench fashion recommendation proto vet clean check-binaries

all: build

build:
	$(GO) build -o $(BIN)/gctl ./cmd/gctl
	$(GO) build -o $(BIN)/gtraind ./cmd/gtraind

vet:
	$(GO) vet ./...

# Build output never goes into git (bin/ is ignored).
check-binaries:
	./scripts/check-no-binaries.sh

# The whole suite, every package under the race detector: unit tests, tests over a
# real embedded etcd and gRPC on loopback, and tests of real gtraind processes.
# go test runs GOMAXPROCS test binaries at once, in the order the packages are
# named: the two longest (e2e, then e2e/endurance) are named first so that
# they start first, and the short ones run in a slot once endurance ends. In
# alphabetical order e2e started only after the packages before it: 1158 s
# for the suite on a fresh clone of the 2-core CI VM, against 802-881 s.
TEST_FIRST := ./e2e/ ./e2e/endurance/
test: check-binaries build vet
	GTRAIN_BIN=$(CURDIR)/$(BIN) GTRAIN_TEST_ARTIFACTS=$(CURDIR)/test-artifacts $(GO) test -race -timeout 45m $(TEST_FIRST) ./...
	GOEXPERIMENT= $(GO) test -count=1 ./pserver/   # the scalar optimizer path too
	CGO_ENABLED=0 GOFLAGS= GOEXPERIMENT= $(GO) test -count=1 ./model/   # the pure-Go kernels and scalar passes too
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_TEST)

# Go native fuzzing of what reads hostile input: record shards, checkpoint
# files, job specs, tensor messages, program frames. `make test` runs each for
# FUZZTIME_TEST inputs: a count, not a duration, since Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" when a
# duration ends under load (go.dev/issue/75804, fixed in Go 1.27).
# `make fuzz FUZZTIME=5m` searches longer. One target per go test run (go test
# fuzzes one target at a time); -run '^$$' skips the package's other tests.
FUZZTIME      ?= 5s
FUZZTIME_TEST ?= 20000x
FUZZ_TARGETS  := ./auth:FuzzVerifyToken ./recordio:FuzzReadIndex ./dataset:FuzzReadShard ./checkpoint:FuzzDecodeSnapshot \
	./jobspec:FuzzParse ./pserver/wire:FuzzCodecDecode ./pserver/wire:FuzzCodecTables ./program/wire:FuzzReadFrame
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

test-short: build
	$(GO) test -short ./...

demo: build
	./scripts/demo.sh

# ONLY=g1,g2 runs some groups only.
bench: build
	$(GO) run ./bench/cmd -out bench/results.json $(if $(ONLY),-only $(ONLY))

# Fashion-MNIST softmax and MLP on the full 60k training set, tested on the official t10k
# set (Debian's dataset-fashion-mnist): accuracy and records/s, also in bench/fashion.json.
# Several minutes; not part of `make test` or `make bench`.
fashion: build
	./scripts/fashion.sh

# The recommender of examples/recommendation/ on generated MovieLens-shaped ratings (README
# there; RECOMMENDER=torch for the PyTorch program, ML1M=DIR for the real files).
recommendation: build
	./examples/recommendation/run.sh $(RECOMMENDER)

# Regenerate api/*.pb.go (needs protoc, protoc-gen-go, protoc-gen-go-grpc on PATH).
proto:
	cd api && protoc --go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative *.proto

clean:
	rm -rf $(BIN)
