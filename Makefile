# The two commands of the README, and the steps they share.
SWIFT ?= swift
DEMO_PORT ?= 1883
DEMO_WEB_PORT ?= 8080

.PHONY: all deps browser-deps browser-smoke build lint test demo bench hub hub-profile clean fuzz fuzz-build fuzz-short fuzz-replay soak

all: build

deps:
	@scripts/install-deps.sh

## What the real-browser and real-peer tests need, and only they (not `make demo`): Debian's chromium
## and chromedriver, an avahi-daemon for the mDNS test, .build/venv with
## scripts/python-requirements.txt (selenium, HAP-python), and .build/ha-venv with Home Assistant
## (Python 3.13). After deps: one apt at a time.
browser-deps: deps
	@scripts/install-browser.sh
	@scripts/install-mdns-tools.sh
	@scripts/install-python-tools.sh
	@scripts/install-home-assistant.sh

## Headless chromium loads a local page, fills its form and waits for its JavaScript, at a phone's
## and a desktop's size; the screenshots go to .build/browser-smoke/.
browser-smoke: browser-deps
	.build/venv/bin/python scripts/browser-smoke.py --size phone .build/browser-smoke/phone.png
	.build/venv/bin/python scripts/browser-smoke.py --size desktop .build/browser-smoke/desktop.png

build: deps
	$(SWIFT) build

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

## Installs what is missing (the browser tests' tools too), builds, and runs the whole test suite against
## real mosquitto brokers, the fuzz corpora as regression tests, and each fuzz target for FUZZ_SECONDS.
test: deps browser-deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test
	$(MAKE) fuzz-replay fuzz-short

FUZZ_SECONDS ?= 10
FUZZ_LONG_SECONDS ?= 600
FUZZ_TARGETS = fuzz-topics fuzz-payload fuzz-config

## Runs the committed corpora (and saved crashes) through the normal build of each fuzz target.
fuzz-replay:
	$(SWIFT) build $(addprefix --product ,$(FUZZ_TARGETS))
	for target in topics payload config; do "$$($(SWIFT) build --show-bin-path)/fuzz-$$target" Tests/Fuzz/corpus/$$target || exit 1; done

## Builds the fuzz targets with libFuzzer and AddressSanitizer in their own scratch folder.
fuzz-build:
	for target in $(FUZZ_TARGETS); do \
		$(SWIFT) build --scratch-path .build-fuzz --product $$target -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING || exit 1; \
	done

## A bounded fuzz run (FUZZ_SECONDS per target), part of `make test`.
fuzz-short: fuzz-build
	scripts/fuzz.sh $(FUZZ_SECONDS)

SOAK_MINUTES ?= 10
SOAK_RATE ?= 2000

## The long runs CI does not run: the load soak (SOAK_MINUTES at SOAK_RATE commands/s over 1,000
## accessories), the broker outage at 30 s, and 200 SIGKILLs. Figures go to .build/soak.txt.
soak: build
	$(SWIFT) build --build-tests
	$(SWIFT) build -c release --product homegate
	HOMEGATE_EXECUTABLE="$$($(SWIFT) build -c release --show-bin-path)/homegate" HOMEGATE_SOAK=1 HOMEGATE_SOAK_MINUTES=$(SOAK_MINUTES) HOMEGATE_SOAK_RATE=$(SOAK_RATE) \
	HOMEGATE_OUTAGE_SECONDS=30 HOMEGATE_KILL_ROUNDS=200 \
		$(SWIFT) test --skip-build --filter 'SoakTests|BrokerFaultTests|GatewayKillTests' 2>&1 | tee .build/soak.txt

## The long fuzz run (FUZZ_LONG_SECONDS per target, 10 minutes by default); not run by CI.
fuzz: fuzz-build
	scripts/fuzz.sh $(FUZZ_LONG_SECONDS)

## Installs what is missing, builds, and starts a loopback broker with the gateway connected to it.
demo: build
	"$$($(SWIFT) build --show-bin-path)/homegate" demo --port $(DEMO_PORT) --web-port $(DEMO_WEB_PORT)

## Installs what is missing, builds homegate (release), the hub's release build (static Swift standard
## library, in .build-hub), the C floors, load generators and the slow-disk library, and runs the
## benchmark: a table on stdout, bench/out/results.json, and the figures in docs/benchmarks.md.
bench: deps hub bench/out/floor bench/out/loadgen bench/out/z2mfloor bench/out/z2mload bench/out/slowfsync.so
	$(SWIFT) build -c release --product homegate
	$(SWIFT) build -c release --product hap-bench
	$(SWIFT) build -c release --product flap-bench
	scripts/install-python-tools.sh
	bench/run.sh

## The build for a hub: release, the Swift runtime and Foundation linked in (a Pi needs no Swift
## installed), the code that runs laid out together (scripts/hub/symbol-order.txt, scripts/hub/code-layout.ld: a
## function per section, lld puts the listed ones first), stripped: .build-hub/homegate-hub. It has a
## scratch folder of its own: SwiftPM does not recompile what it built before when only flags change.
HUB_BUILD = -c release --static-swift-stdlib --scratch-path .build-hub --product homegate \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/hub/symbol-order.txt -Xlinker --no-warn-symbol-ordering \
	-Xlinker -T -Xlinker $(CURDIR)/scripts/hub/code-layout.ld
HUB_LINKED = .build-hub/release/homegate

hub: deps
	@# SwiftPM does not know the linker reads these two files: a new layout needs a new link.
	@if [ scripts/hub/symbol-order.txt -nt $(HUB_LINKED) ] || [ scripts/hub/code-layout.ld -nt $(HUB_LINKED) ]; then rm -f $(HUB_LINKED); fi
	$(SWIFT) build $(HUB_BUILD)
	strip -o .build-hub/homegate-hub $(HUB_LINKED)

## Profiles the hub build under callgrind, writes scripts/hub/symbol-order.txt (scripts/hub-profile.sh) and
## links the hub build with it; run it when the benchmark's hub section says many listed functions
## are gone.
hub-profile: hub bench/out/loadgen bench/out/z2mload
	$(SWIFT) build -c release --product hap-bench
	scripts/hub-profile.sh $(HUB_LINKED)
	$(MAKE) hub

BENCH_CFLAGS ?= -O2 -Wall -Wextra

bench/out/%: bench/%.c
	@mkdir -p bench/out
	$(CC) $(BENCH_CFLAGS) -o $@ $< $$(pkg-config --cflags --libs libmosquitto) -lpthread

## The headers the bench programs share (the floors' relay, the load generators' client and clock).
bench/out/floor bench/out/z2mfloor: bench/relay.h
bench/out/loadgen bench/out/z2mload: bench/load.h

## The slow disk of the benchmark: an LD_PRELOAD library whose fsync, fdatasync and syncfs sleep first.
bench/out/slowfsync.so: bench/slowfsync.c
	@mkdir -p bench/out
	$(CC) $(BENCH_CFLAGS) -shared -fPIC -o $@ $< -ldl

clean:
	rm -rf .build .build-fuzz .build-hub .homegate-demo bench/out
