# Makefile — thin wrapper around meson: install packages, build, demo, test, check.
# The build itself is meson's (meson.build); this only strings steps together.

# Debian packages, installed by `make deps*` only when missing.
DEPS_BUILD := meson ninja-build pkgconf gcc libc6-dev make libsystemd-dev \
              libmicrohttpd-dev libjson-c-dev libgpiod-dev libinih-dev \
              libcurl4-openssl-dev scdoc
DEPS_TEST  := libcmocka-dev python3-pytest valgrind curl stress stress-ng iproute2 systemd tmux \
              prometheus man-db util-linux qemu-system-arm fuse3 libfuse3-dev chromium chromium-driver python3-selenium libxml2-utils \
              time
DEPS_BENCH := wrk prometheus-node-exporter valgrind dpkg-dev
DEPS_DEB   := debhelper dpkg-dev fakeroot lintian git
# The booted-systemd test: debootstrap a Debian 12 tree, boot it with nspawn.
DEPS_NSPAWN := debootstrap systemd-container iproute2 util-linux
DEPS_FUZZ  := clang libclang-rt-dev

BUILD       ?= build
BUILD_SAN   ?= build-san
BUILD_CROSS ?= build-cross
BUILD_GPIOD2 ?= build-gpiod2
BUILD_DEB   ?= $(BUILD)/deb
# 1: check-systemd fails instead of skipping where nspawn cannot run (CI).
HEATCURVE_NSPAWN_REQUIRED ?= 0
BUILD_FUZZ  ?= build-fuzz
FUZZ_SECONDS ?= 45
FUZZ_RUNS    ?= -1
FUZZ_TARGETS ?= duration token config sysfs http rundef import samples history
CROSS_ARCHS ?= arm64 armhf
MESON_OPTS  ?=
TESTARGS    ?=
# Tests at once: the integration files mostly wait on daemons' ticks, so more than the CPUs.
TESTJOBS    ?= $(shell echo $$(( $$(nproc) * 3 )))
STATE       ?= $(BUILD)/demo-state
LISTEN      ?= 127.0.0.1:8080
ARGS        ?=

# GCC's -fsanitize=undefined leaves out float-to-integer conversions; they are asked for apart.
SAN_OPTS := -Db_sanitize=address,undefined -Db_lundef=false \
            -Dc_args=-fsanitize=float-cast-overflow -Dc_link_args=-fsanitize=float-cast-overflow
SAN_ENV  := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The tiers, as meson suites (tests/meson.build). First the unit tests and the
# fuzz seeds, as many at once as CPUs (test-stress measures its workers' share
# of the CPU), then the integration files, TESTJOBS at once.
MESON_TEST    = meson test --print-errorlogs
SAN_TEST      = $(SAN_ENV) $(MESON_TEST) --timeout-multiplier 3
SUITES_FIRST := --suite unit --suite fuzz-seeds
SUITES_QUICK := --num-processes $(TESTJOBS) --suite api
SUITES_CHECK := --num-processes $(TESTJOBS) --no-suite unit --no-suite fuzz-seeds --no-suite slow
SUITES_SLOW  := --num-processes $(TESTJOBS) --suite slow
ENSURE  := tests/scripts/ensure-debs.sh

# Steps run in the order written; ninja and meson test parallelise inside.
.NOTPARALLEL:
.PHONY: all deps deps-build deps-test deps-bench deps-fuzz build build-san demo test check screenshots \
        check-san check-slow check-cross check-gpiod2 check-qemu fuzz deb deb-cross check-systemd clean help

all: build

help:
	@echo "make demo         install build packages, build, run heatcurved (simulated board"
	@echo "                  unless this machine has thermal zones); ARGS=... adds options"
	@echo "make test         install build+test packages, build, run the quick tests: unit tests,"
	@echo "                  the fuzz seeds and the HTTP API files (meson suites unit, fuzz-seeds, api)"
	@echo "make check        install build+test packages, build, run every test but the slow ones,"
	@echo "                  then again with AddressSanitizer+UBSan ($(BUILD_SAN)/)"
	@echo "make check-slow   the slow tests (soak, replays, real timeouts, the browser; suite slow),"
	@echo "                  natively and with AddressSanitizer+UBSan"
	@echo "make check-cross  build for $(CROSS_ARCHS) and run the unit tests under qemu-user"
	@echo "make deb          the Debian package for this machine, checked by lintian ($(BUILD_DEB)/)"
	@echo "make deb-cross    the Debian packages for $(CROSS_ARCHS) (cross environment as check-cross)"
	@echo "make check-systemd  boot Debian 12 in systemd-nspawn, install the .deb, test the service"
	@echo "make check-gpiod2 build against libgpiod 2.x from bookworm-backports (unpacked into"
	@echo "                  /var/cache/heatcurve-ci/libgpiod2, apt untouched), run the unit tests"
	@echo "make check-qemu   arm64 build of tests/qemu/gpio-check, run on the GPIO chip of a"
	@echo "                  qemu-system-aarch64 virt machine (Debian's arm64 kernel)"
	@echo "make fuzz         build the libFuzzer targets with clang ($(BUILD_FUZZ)/) and run each"
	@echo "                  for FUZZ_SECONDS=$(FUZZ_SECONDS) s (or FUZZ_RUNS executions);"
	@echo "                  FUZZ_TARGETS=\"$(FUZZ_TARGETS)\""
	@echo "make screenshots  retake README's pictures (docs/*.png) on the simulated board with"
	@echo "                  headless Chromium (contrib/screenshots.sh, about 3 min)"
	@echo "make deps | deps-build | deps-bench | build | clean"

deps-build:
	@$(ENSURE) $(DEPS_BUILD)

deps:
	@$(ENSURE) $(DEPS_BUILD) $(DEPS_TEST)

deps-test: deps

deps-bench:
	@$(ENSURE) $(DEPS_BENCH)

deps-fuzz:
	@$(ENSURE) $(DEPS_BUILD) $(DEPS_FUZZ)

# meson setup only when the build dir is not configured; ninja re-runs meson
# by itself when a meson.build changes.
define meson_setup
	@if [ ! -f $(1)/build.ninja ]; then \
	    if [ -f $(1)/meson-private/coredata.dat ]; then \
	        echo "meson setup --reconfigure $(1) $(2)"; meson setup --reconfigure $(1) $(2); \
	    else \
	        echo "meson setup $(1) $(2)"; meson setup $(1) $(2); \
	    fi; \
	fi
endef

build:
	$(call meson_setup,$(BUILD),$(MESON_OPTS))
	ninja -C $(BUILD)

build-san:
	$(call meson_setup,$(BUILD_SAN),$(SAN_OPTS) $(MESON_OPTS))
	ninja -C $(BUILD_SAN)

demo: deps-build build
	@mkdir -p $(STATE)
	@mode=--simulate; \
	case " $(ARGS) " in *" --simulate"*|*" --sysfs-root"*) mode= ;; esac; \
	if [ -n "$$mode" ] && cat /sys/class/thermal/thermal_zone0/temp >/dev/null 2>&1; then \
	    mode=; echo "This machine has thermal zones: showing its real sensors."; \
	elif [ -n "$$mode" ]; then \
	    echo "No readable /sys/class/thermal here: showing the simulated board."; \
	    echo "  Heat it up:   stress --cpu $$(nproc) --timeout 120"; \
	fi; \
	listen=; [ "$(origin LISTEN)" = file ] || listen="--listen $(LISTEN)"; \
	echo ""; \
	echo "  Dashboard:    http://$(LISTEN)/"; \
	echo "  Status:       http://$(LISTEN)/api/v1/status"; \
	echo "  Sensors:      curl $(LISTEN)/api/v1/sensors"; \
	echo "  History:      curl '$(LISTEN)/api/v1/history?points=60'"; \
	echo "  State dir:    $(STATE)      Stop: Ctrl-C"; \
	if [ "$$(id -u)" = 0 ] && ! case " $(ARGS) " in *" --allow-root "*) true ;; *) false ;; esac; then \
	    echo "  As root, runs with a load are refused: ARGS=--allow-root allows them."; fi; \
	echo ""; \
	set -x; HEATCURVE_BOARDS_DIR=$(CURDIR)/data/boards exec ./$(BUILD)/heatcurved $$mode --state-dir $(STATE) $$listen $(ARGS)

screenshots: deps-build build
	@$(ENSURE) chromium curl python3
	contrib/screenshots.sh $(BUILD) docs

test: deps build
	@echo "===== quick tests: unit, fuzz seeds, HTTP API ($(BUILD)/) ====="
	$(MESON_TEST) -C $(BUILD) $(SUITES_FIRST) $(TESTARGS)
	$(MESON_TEST) -C $(BUILD) $(SUITES_QUICK) $(TESTARGS)

check: deps build
	ninja -C $(BUILD) bench
	@echo "===== tests: unit, fuzz seeds, integration ($(BUILD)/) ====="
	$(MESON_TEST) -C $(BUILD) $(SUITES_FIRST) $(TESTARGS)
	$(MESON_TEST) -C $(BUILD) $(SUITES_CHECK) $(TESTARGS)
	@$(MAKE) --no-print-directory check-san

check-san: deps build-san
	@echo "===== tests: AddressSanitizer + UndefinedBehaviorSanitizer ($(BUILD_SAN)/) ====="
	$(SAN_TEST) -C $(BUILD_SAN) $(SUITES_FIRST) $(TESTARGS)
	$(SAN_TEST) -C $(BUILD_SAN) $(SUITES_CHECK) $(TESTARGS)

check-slow: deps build build-san
	@echo "===== slow tests ($(BUILD)/) ====="
	$(MESON_TEST) -C $(BUILD) $(SUITES_SLOW) $(TESTARGS)
	@echo "===== slow tests: AddressSanitizer + UndefinedBehaviorSanitizer ($(BUILD_SAN)/) ====="
	$(SAN_TEST) -C $(BUILD_SAN) $(SUITES_SLOW) $(TESTARGS)

check-cross: deps-build
	tests/cross/check-cross.sh $(BUILD_CROSS) $(CROSS_ARCHS)

check-gpiod2: deps
	@echo "===== libgpiod 2.x build + unit tests ($(BUILD_GPIOD2)/) ====="
	tests/scripts/check-gpiod2.sh $(BUILD_GPIOD2)

check-qemu: deps
	@echo "===== GPIO on a real kernel chip: qemu-system-aarch64 ($(BUILD_CROSS)/arm64/) ====="
	tests/qemu/check-qemu.sh $(BUILD_CROSS)/arm64

deb: deps-build
	@$(ENSURE) $(DEPS_DEB)
	tests/scripts/build-deb.sh $(BUILD_DEB)

# Same cross environments as check-cross; armhf's sysroot is shared with it.
deb-cross: deps-build
	@$(ENSURE) $(DEPS_DEB)
	@for arch in $(CROSS_ARCHS); do \
	    case $$arch in \
	    arm64) tests/cross/setup-arm64.sh || exit 1 ;; \
	    armhf) tests/cross/setup-armhf.sh $(BUILD_CROSS)/armhf-env || exit 1 ;; \
	    esac; \
	    ARMHF_ENV=$(BUILD_CROSS)/armhf-env tests/scripts/build-deb.sh $(BUILD_DEB) $$arch || exit 1; \
	done

check-systemd: deb
	@$(ENSURE) $(DEPS_NSPAWN)
	HEATCURVE_NSPAWN_REQUIRED=$(HEATCURVE_NSPAWN_REQUIRED) tests/nspawn/check-systemd.sh $(BUILD_DEB)

# libFuzzer needs clang: its own build dir, every library instrumented.
fuzz: deps-fuzz
	@if [ ! -f $(BUILD_FUZZ)/build.ninja ]; then \
	    echo "CC=clang meson setup $(BUILD_FUZZ) -Dfuzz=true ..."; \
	    CC=clang meson setup $(BUILD_FUZZ) -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
	        -Dtests=disabled -Dcli=disabled $(MESON_OPTS); \
	fi
	ninja -C $(BUILD_FUZZ)
	FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_CROSS) $(BUILD_GPIOD2) $(BUILD_FUZZ)
