# Brine: two commands set everything up on a fresh Debian 12 machine, as root.
#   make demo   build, start throwaway sshd hosts, run salt-ssh on them, promote them to minions, tear down
#   make test   every test: unit, fuzz seeds, end-to-end on real sshd hosts, conformance
SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
THIN_ARCHS ?= amd64 arm64
LDFLAGS := -s -w
export CGO_ENABLED := 0

.PHONY: all build thin cross windows wintest packages repo deps demo test unit e2e conformance bench vet fmt clean

all: build

deps:
	@scripts/install-deps.sh

# salt-master alone is built with cgo: its pam eauth (internal/eauth/pam)
# links the system's libpam. Everything else stays static and pure Go.
build: thin windows
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ $$($(GO) list ./cmd/... | grep -v '/cmd/salt-master$$') ./internal/testsupport/testhosts/cmd/testhosts
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/salt-master

# Two static thin binaries per target architecture, the full runtime and
# the core flavor (test, cmd, grains; see thin/core) that salt-ssh sends
# on first contact for those functions; salt-ssh finds them beside itself
# and sends the one a host and a job need. Where the zstd tool is
# installed, a .zst copy with a 256 KiB window goes beside each binary
# (about 10% smaller than salt-ssh's own encoder makes; salt-ssh checks
# that it decodes to the binary before sending it, see sshexec/prebuilt.go).
# The core flavor is built without inlining: 7% smaller on disk and 14%
# on the wire, which every cold host pays for in bytes to decrypt and
# unpack, while nothing it runs is CPU-bound (the full thin keeps inlining:
# compound matching ran 2.3 times slower without it).
CORE_GCFLAGS := all=-l
thin:
	@mkdir -p $(BIN)
	@for a in $(THIN_ARCHS); do for f in salt-thin salt-thin-core; do \
		t=$(BIN)/$$f-linux-$$a; g=; [ $$f = salt-thin-core ] && g='$(CORE_GCFLAGS)'; \
		GOOS=linux GOARCH=$$a $(GO) build -trimpath -buildvcs=false -gcflags="$$g" -ldflags '$(LDFLAGS)' -o $$t ./cmd/$$f || exit 1; \
		if ! command -v zstd >/dev/null 2>&1; then rm -f $$t.zst; \
		elif [ ! -e $$t.zst ] || [ $$t -nt $$t.zst ]; then zstd -19 --zstd=wlog=18 -q -f -o $$t.zst $$t || exit 1; fi; \
	done; done

# The Windows minion: salt-minion.exe and salt-call.exe for each of
# WIN_ARCHS, static pure Go (golang.org/x/sys/windows), in
# bin/windows-<arch>/. See docs/WINDOWS.md.
WIN_ARCHS ?= amd64 arm64
windows:
	@for a in $(WIN_ARCHS); do \
		GOOS=windows GOARCH=$$a $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)' \
			-o $(BIN)/windows-$$a/ ./cmd/salt-minion ./cmd/salt-call || exit 1; \
	done

# The Windows packages' tests, as windows/amd64 binaries under Wine
# (internal/testsupport/winetest/winexec: a throwaway prefix with the
# ProcessPrng shim, in a private network namespace). Only the tests named
# TestWindows* run: the rest of these packages' tests are the Linux ones.
WIN_TEST_PKGS := ./internal/winsession ./internal/config ./internal/pki ./state/coregrains ./state/modules/cmd \
	./state/modules/reg ./state/states/regstate ./minion/winservice ./state/modules/winservice ./state/modules/winsystem
wintest:
	@$(GO) build -o $(BIN)/winexec ./internal/testsupport/winetest/winexec
	GOOS=windows GOARCH=amd64 $(GO) test -count=1 -run '^TestWindows' -exec $(BIN)/winexec $(WIN_TEST_PKGS)

# Packages: .deb and .rpm for each of PKG_ARCHS, split as Salt 3006's
# (internal/tools/pkgtool). The version comes from `git describe` (a tree
# without a v* tag gets 0~git<commits>.g<hash>), every file's time from
# the commit (SOURCE_DATE_EPOCH), so one commit always builds the same
# bytes. A package whose command is not on this tree fails the build by
# name; build the others with, e.g., PACKAGES='salt-common salt-minion'.
PKG_ARCHS ?= amd64 arm64
PACKAGES  ?= salt-common salt-master salt-minion salt-ssh salt-api salt-syndic
DIST      ?= $(CURDIR)/dist
PKGTOOL    = $(GO) run ./internal/tools/pkgtool
PKG_VERSION = $(shell $(PKGTOOL) version)
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct)
# Every command but the thin flavors, for each package architecture, in
# bin/linux-<arch>/, stamped with the package version. salt-master is
# built with cgo (libpam) for this machine's architecture; for the others
# there is no cross C toolchain here, so it is built without cgo and its
# pam eauth refuses with "pam eauth needs a salt-master built with cgo"
# (file, sharedsecret and auto work everywhere).
HOST_ARCH := $(shell $(GO) env GOARCH)
cross: thin
	@v='$(PKG_VERSION)'; ld="$(LDFLAGS) -X github.com/brinesalt/brine/internal/version.Brine=$$v"; for a in $(PKG_ARCHS); do \
		GOOS=linux GOARCH=$$a $(GO) build -trimpath -buildvcs=false -ldflags "$$ld" \
			-o $(BIN)/linux-$$a/ $$($(GO) list ./cmd/... | grep -v '/salt-thin' | grep -v '/cmd/salt-master$$') || exit 1; \
		cgo=0; [ $$a = $(HOST_ARCH) ] && cgo=1; \
		CGO_ENABLED=$$cgo GOOS=linux GOARCH=$$a $(GO) build -trimpath -buildvcs=false -ldflags "$$ld" -o $(BIN)/linux-$$a/ ./cmd/salt-master || exit 1; \
	done

packages: cross
	rm -rf $(DIST)/deb $(DIST)/rpm $(DIST)/repo
	$(PKGTOOL) build -src packaging -bin $(BIN) -out $(DIST) -arch '$(PKG_ARCHS)' -thin-arch '$(THIN_ARCHS)' -packages '$(PACKAGES)'

# An APT repository (dists/, pool/; InRelease and Release.gpg signed
# with REPO_KEY, an armored OpenPGP secret key) and a YUM repository
# (repodata/, repomd.xml.asc) in $(DIST)/repo, for any static file server.
# `go run ./internal/tools/pkgtool key -out DIR` makes a throwaway key.
REPO_KEY ?=
repo: packages
	@test -n '$(REPO_KEY)' || { echo 'make repo: REPO_KEY=<armored secret key> signs the repository (pkgtool key -out DIR makes a throwaway one)'; exit 2; }
	$(PKGTOOL) repo -in $(DIST) -out $(DIST)/repo -key '$(REPO_KEY)' -bootstrap packaging/bootstrap-salt.sh

DEMO_DIR := /tmp/brine-demo
demo: deps build
	@scripts/demo.sh $(BIN) $(DEMO_DIR)

# The tooling gate: vet, gofmt, a tidy go.mod and staticcheck, so each
# stays clean. staticcheck runs at a pinned version from the module proxy;
# Salt's capitalised error strings carry a //lint:ignore ST1005 each.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }
	@$(GO) mod tidy -diff || { echo 'go.mod/go.sum are not tidy: run go mod tidy'; exit 1; }
	$(GO) run $(STATICCHECK) ./...

# BRINE_REQUIRE_HOSTS turns a missing sshd, root or network namespaces into
# a failure instead of a skip (testhosts.Skip), so a green run always means
# the end-to-end tests ran. Tests build with cgo, so internal/eauth/pam's
# tests reach the real libpam (test binaries that build thin set
# CGO_ENABLED=0 themselves). Every package runs in one `go test`, the
# harness's own tests beside the other packages' clusters (they once killed
# a live cluster's session; fixed, see docs/NOTES.md). testsummary prints
# each package's result, every failure's output and every skip with its
# reason, fails on a skip that internal/testsupport/testsummary/allowed_skips.txt does
# not justify, and ends with the line `N passed, N failed, N skipped`.
test: deps build vet wintest
	@$(GO) build -o $(BIN)/testsummary ./internal/testsupport/testsummary
	@set -o pipefail; CGO_ENABLED=1 BRINE_REQUIRE_HOSTS=1 BRINE_BIN=$(BIN) $(GO) test -json -count=1 -timeout 30m ./... 2>&1 \
		| $(BIN)/testsummary -allow internal/testsupport/testsummary/allowed_skips.txt

bench: build
	@scripts/install-deps.sh --bench
	@bench/run.sh $(BIN)

clean:
	rm -rf $(BIN) $(DIST)
