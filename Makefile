# The two commands of the README, and the steps they share.
SWIFT ?= swift
DEMO_PORT ?= 1883

.PHONY: all deps build lint test demo bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

## Installs what is missing, builds, and runs the whole test suite against real mosquitto brokers.
test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test

## Installs what is missing, builds, and starts a loopback broker with the gateway connected to it.
demo: build
	"$$($(SWIFT) build --show-bin-path)/homegate" demo --port $(DEMO_PORT)

## Installs what is missing, builds homegate (release) and the C floor and load generator, and runs the
## benchmark: a table on stdout, bench/out/results.json, and the figures in docs/benchmarks.md.
bench: deps bench/out/floor bench/out/loadgen
	$(SWIFT) build -c release --product homegate
	bench/run.sh

BENCH_CFLAGS ?= -O2 -Wall -Wextra

bench/out/%: bench/%.c
	@mkdir -p bench/out
	$(CC) $(BENCH_CFLAGS) -o $@ $< $$(pkg-config --cflags --libs libmosquitto) -lpthread

clean:
	rm -rf .build .homegate-demo bench/out
