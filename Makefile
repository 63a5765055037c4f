# The two commands of the README, and the steps they share.
SWIFT ?= swift
DEMO_PORT ?= 1883

.PHONY: all deps build lint test demo clean

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

clean:
	rm -rf .build .homegate-demo
