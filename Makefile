# Makefile — thin wrapper around meson: install packages, build, demo, check.
# The build itself is meson's (meson.build); this only strings steps together.

# Debian packages, installed by `make deps*` only when missing.
DEPS_BUILD := meson ninja-build pkgconf gcc libc6-dev make libsystemd-dev \
              libmicrohttpd-dev libjson-c-dev libgpiod-dev libinih-dev \
              libcurl4-openssl-dev
DEPS_TEST  := libcmocka-dev python3-pytest valgrind curl stress stress-ng iproute2 systemd \
              prometheus chromium libxml2-utils
DEPS_BENCH := wrk prometheus-node-exporter valgrind

BUILD       ?= build
BUILD_SAN   ?= build-san
BUILD_CROSS ?= build-cross
CROSS_ARCHS ?= arm64 armhf
MESON_OPTS  ?=
TESTARGS    ?=
STATE       ?= $(BUILD)/demo-state
LISTEN      ?= 127.0.0.1:8080
ARGS        ?=

SAN_OPTS := -Db_sanitize=address,undefined -Db_lundef=false
SAN_ENV  := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ENSURE  := tests/scripts/ensure-debs.sh

# Steps run in the order written; ninja and meson test parallelise inside.
.NOTPARALLEL:
.PHONY: all deps deps-build deps-test deps-bench build build-san demo check \
        check-san check-cross clean help

all: build

help:
	@echo "make demo         install build packages, build, run heatcurved (simulated board"
	@echo "                  unless this machine has thermal zones); ARGS=... adds options"
	@echo "make check        install build+test packages, build, run every test, then again"
	@echo "                  with AddressSanitizer+UBSan ($(BUILD_SAN)/)"
	@echo "make check-cross  build for $(CROSS_ARCHS) and run the unit tests under qemu-user"
	@echo "make deps | deps-build | deps-bench | build | clean"

deps-build:
	@$(ENSURE) $(DEPS_BUILD)

deps:
	@$(ENSURE) $(DEPS_BUILD) $(DEPS_TEST)

deps-test: deps

deps-bench:
	@$(ENSURE) $(DEPS_BENCH)

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
	echo "  Status:       http://$(LISTEN)/api/v1/status"; \
	echo "  Sensors:      curl $(LISTEN)/api/v1/sensors"; \
	echo "  History:      curl '$(LISTEN)/api/v1/history?points=60'"; \
	echo "  State dir:    $(STATE)      Stop: Ctrl-C"; \
	echo ""; \
	set -x; exec ./$(BUILD)/heatcurved $$mode --state-dir $(STATE) $$listen $(ARGS)

check: deps build
	ninja -C $(BUILD) bench
	@echo "===== tests: unit + integration ($(BUILD)/) ====="
	meson test -C $(BUILD) --print-errorlogs $(TESTARGS)
	@$(MAKE) --no-print-directory check-san

check-san: deps build-san
	@echo "===== tests: AddressSanitizer + UndefinedBehaviorSanitizer ($(BUILD_SAN)/) ====="
	$(SAN_ENV) meson test -C $(BUILD_SAN) --print-errorlogs --timeout-multiplier 3 $(TESTARGS)

check-cross: deps-build
	tests/cross/check-cross.sh $(BUILD_CROSS) $(CROSS_ARCHS)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_CROSS)
