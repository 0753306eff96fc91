# The two commands a newcomer needs: `make demo` and `make test`. Both
# install what they need first (scripts/install-deps.sh, as root or sudo).
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CMAKE_ARGS ?=

.PHONY: all deps node-deps build test soak demo sanitize install clean image-test

all: build

deps:
	$(SUDO) scripts/install-deps.sh

# The Node speaker's one dependency (ioredis), as the committed lock file
# pins it; as the user, not root. Its tests run under `make test`.
node-deps: clients/node/node_modules/.package-lock.json

clients/node/node_modules/.package-lock.json: clients/node/package-lock.json | deps
	npm ci --prefix clients/node --no-audit --no-fund

build: deps node-deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

# Everything but the soak (a million jobs; `make soak` runs it).
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 300 -LE soak

soak: build
	EMQ_SOAK=1 ctest --test-dir $(BUILD) --output-on-failure -L soak

demo: build
	scripts/demo.sh $(BUILD)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS=-DEMQ_SANITIZE=ON

# The container image built from the Dockerfile and run: for those who ship
# it. Needs no image registry (scripts/image-test.sh says how).
image-test:
	$(SUDO) scripts/image-test.sh

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-asan
