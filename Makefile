# `make test` installs what the tests need (quietly when it is already there),
# then vets and runs every test with the race detector. Installing uses
# apt-get and dpkg: Debian and Ubuntu only (elsewhere, install the
# APT_PACKAGES yourself and run `go test -race ./...`).

GO ?= go
APT_PACKAGES := adb tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim fonts-noto-cjk chromium ffmpeg
NPM_DIR := .cache/npm

.PHONY: test deps deps-apt deps-npm vet bench fmt install stress

# `make install` puts apex in $(go env GOBIN) (default ~/go/bin), stamped
# with the version (git describe) and commit `apex version` prints: the
# light build (-tags apexlite: version, devices, source, screenshot and
# scene on Android phones, in about a third of the full build's start-up
# CPU) as apex, and the full build beside it as apex-full, which apex
# hands every other command line to.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/apexagent/apex/cli.Version=$(VERSION) -X github.com/apexagent/apex/cli.Commit=$(COMMIT)
BINDIR ?= $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)

# CGO_ENABLED=0 links them statically: no dynamic loader and libc to start
# (a fifth of the light build's start-up CPU).
install:
	@echo "building apex into $(BINDIR) (a first build downloads ~130 MB of modules and compiles for minutes; later builds take seconds)"
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o "$(BINDIR)/apex-full" ./cmd/apex
	CGO_ENABLED=0 $(GO) build -tags apexlite -ldflags "$(LDFLAGS)" -o "$(BINDIR)/apex" ./cmd/apex

test: deps vet
	$(GO) test -race -timeout 30m ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

deps: deps-apt deps-npm

# Installs only the Debian packages that are missing; silent when all are present.
deps-apt:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The real third-party clients the tests drive (mobile-mcp, the MCP SDK), pinned in test/npm.
# `npm install` from the lock file, not `npm ci`: mobile-mcp's mobilecli names optional
# per-platform packages with no version, which `npm ci` rejects as a lock mismatch.
# Reinstalls whenever the lock file differs from the one last installed.
deps-npm:
	@if [ -f test/npm/package.json ] && ! cmp -s test/npm/package-lock.json test/npm/node_modules/.installed-lock.json; then \
		echo "installing npm packages for tests"; \
		(cd test/npm && npm install --no-save --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json); fi

# `make stress` runs the server and cli tests three times with the race
# detector beside a CPU hog (a busy goroutine per core): a test that waits
# on time instead of a condition fails here first (issue 20).
STRESS_PACKAGES ?= ./server/ ./cli/
stress: deps
	$(GO) build -o .cache/cpuhog ./bench/cpuhog
	.cache/cpuhog -for 2h & hog=$$!; \
	$(GO) test -race -count=3 -timeout 90m $(STRESS_PACKAGES); rc=$$?; \
	kill $$hog; exit $$rc

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
