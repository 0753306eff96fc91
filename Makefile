# The two commands a newcomer needs: `make demo` and `make test`. Each
# installs what it needs first (scripts/install-deps.sh, as root or sudo),
# and no more: `make build` and `make demo` the build and run-time packages
# and compile the programs (emqd, emq, the emq module, the example
# plugins); `make test` adds the test tools and compiles the tests too;
# `make deb` adds the packaging tools.
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
# Tests at once: one more than the cores, since much of a test's time is
# spent waiting on its servers and processes (at -j2 on two cores the
# tests' own times add up to 2.6 times the suite's; -j3 took 618 s where
# -j2 took 738).
TEST_JOBS  ?= $(shell echo $$(( $$(nproc) + 1 )))
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CMAKE_ARGS ?=

.PHONY: all deps demo-deps test-deps node-deps build build-tests test soak demo sanitize install clean \
        image-test package-deps package-test-deps deb speakers packages package-test

all: build

deps:
	$(SUDO) scripts/install-deps.sh --build

demo-deps:
	$(SUDO) scripts/install-deps.sh --demo

test-deps:
	$(SUDO) scripts/install-deps.sh --test

# The Node speaker's one dependency (ioredis), as the committed lock file
# pins it; as the user, not root. Its tests run under `make test`.
node-deps: clients/node/node_modules/.package-lock.json

clients/node/node_modules/.package-lock.json: clients/node/package-lock.json | test-deps
	npm ci --prefix clients/node --no-audit --no-fund

# A build directory configured for the first time leaves the tests and the
# benchmarks out (make test turns the tests on), and for make demo the
# debug information too (a third of each unit's compile; the demo reads
# none); one already configured keeps its choices. Either way make build
# compiles the programs alone (emq_programs), never the tests.
CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
FRESH     = $(if $(wildcard $(BUILD)/CMakeCache.txt),,-DEMQ_BUILD_TESTS=OFF -DEMQ_BUILD_BENCH=OFF $(FRESH_DEMO))
demo: FRESH_DEMO = -DEMQ_DEBUG_INFO=OFF

build: deps
	$(CONFIGURE) $(FRESH) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS) --target emq_programs

# The programs and the tests (and the benchmark programs, unless this
# build was first configured by make build).
build-tests: test-deps node-deps
	$(CONFIGURE) -DEMQ_BUILD_TESTS=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

# Everything but the soak (a million jobs; `make soak` runs it).
test: build-tests
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS) --timeout 300 -LE soak

soak: build-tests
	EMQ_SOAK=1 ctest --test-dir $(BUILD) --output-on-failure -L soak

demo: demo-deps build
	scripts/demo.sh $(BUILD)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS=-DEMQ_SANITIZE=ON

# The container image built from the Dockerfile and run: for those who ship
# it. Needs no image registry (scripts/image-test.sh says how). Its programs
# are the .deb's (make deb first), so nothing is compiled twice.
image-test: deb
	$(SUDO) scripts/image-test.sh --deb $(DEB)

# The packages, at the version in VERSION, into dist/: the .deb (make deb
# builds it alone and runs lintian on it), the Python wheel and the npm
# tarball (scripts/build-packages.sh says how). The .deb is made from the
# build in $(BUILD) when make build has configured it (the binaries make
# test ran), else from a build of its own in $(BUILD_DEB) without tests.
# make package-test installs them into a fresh Debian root and runs jobs
# through them, as root like image-test (tests/package/check.sh); with
# image-test in the same make (`make package-test image-test`), the .deb
# is built once.
BUILD_DEB ?= build-deb
PACKAGE   = BUILD=$(BUILD) BUILD_DEB=$(BUILD_DEB) JOBS=$(JOBS) scripts/build-packages.sh
DEB       = dist/emqd_$(shell head -n 1 VERSION)_$(shell dpkg --print-architecture).deb

package-deps:
	$(SUDO) scripts/install-deps.sh --package

package-test-deps:
	$(SUDO) scripts/install-deps.sh --package-test

deb: package-deps
	$(PACKAGE) --deb

speakers: package-deps
	$(PACKAGE) --speakers

packages: deb speakers

package-test: package-test-deps packages
	$(PACKAGE) --binnmu 1 --out $(BUILD_DEB)/binnmu
	$(SUDO) tests/package/check.sh dist $(BUILD_DEB)/binnmu

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-asan $(BUILD_DEB) dist
