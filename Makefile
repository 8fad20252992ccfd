# pressure: node-pressure eviction for Kubernetes.
# The two set-up commands of the README are `make demo` and `make test`; everything else is a helper.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO            ?= go
CACHE         ?= $(or $(PRESSURE_CACHE),$(HOME)/.cache/pressure)
BIN           := bin
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT        ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS       := -s -w -X github.com/kube-pressure/pressure/internal/version.Version=$(VERSION) \
                 -X github.com/kube-pressure/pressure/internal/version.Commit=$(COMMIT)
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
TEST_TIMEOUT  ?= 75m
BINARIES      := pressure-agent pressure-janitor kubectl-pressure
FUZZTIME      ?= 30s

.PHONY: all build fuzz test test-versions test-unit test-vm flake-check soak lint node-lock-check k8s-bins node-deps vm-deps demo demo-down clean help images dist release helm helm-bin

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the three binaries into bin/
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ $(addprefix ./cmd/,$(BINARIES))

lint: ## gofmt, go mod tidy, go vet, staticcheck, no binary in git
	@echo "lint: no binary in git"; out="$$(git ls-files -z | xargs -0 -r grep -l --binary-files=binary -m1 -P '^\x7fELF' 2>/dev/null || true)"; \
		if [[ -n "$$out" ]]; then echo "executables tracked by git (go build without -o?): git rm --cached them:"; echo "$$out"; exit 1; fi
	@echo "lint: gofmt"; out="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go'))"; \
		if [[ -n "$$out" ]]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@echo "lint: go mod tidy"; $(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy (diff above): run go mod tidy"; exit 1; }
	@echo "lint: go vet"; $(GO) vet ./...
	@echo "lint: staticcheck"; GOBIN=$(CACHE)/bin $(GO) install $(STATICCHECK) && $(CACHE)/bin/staticcheck ./...

k8s-bins: ## build the pinned Kubernetes binaries and etcd (cached under $(CACHE))
	@hack/build-k8s.sh >/dev/null

helm-bin: ## build the pinned helm into $(CACHE)/bin once, before the tests that install the chart (on a cold machine several packages would build it at once, each inside its own timeout)
	@hack/install-helm.sh >/dev/null

node-deps: ## install containerd, runc, CNI plugins, iptables and gcc (for -race) when missing (needs root)
	@hack/install-node-deps.sh

vm-deps: ## qemu (apt, needs root) and the cgroup v2 guest's kernel and busybox (unpacked into $(CACHE)/vm)
	@hack/install-vm-deps.sh >/dev/null

test-vm: k8s-bins node-deps vm-deps ## the cgroup v2 guest tier alone (qemu: the guest tests and the kubelet-on-v2 node, about 2.5 min warm)
	$(GO) test -count=1 -v ./test/vm

RUN ?=
PKG ?= ./...
N   ?= 5
# $(value RUN) passes the pattern as typed: $(RUN) would expand make's own $ in it (RUN='^TestA$/sub'
# became ^TestAsub and ran nothing).
flake-check: ## run the tests RUN of PKG N times (go test -count=1 each), never stopping early; report each run and the tally
	@TEST_TIMEOUT=$(TEST_TIMEOUT) GO=$(GO) hack/flake-check.sh '$(value RUN)' '$(value PKG)' '$(N)'

EPISODES    ?= 10
SEED        ?= $(shell date +%s)
FIRST       ?= 0
FAULTS      ?= all
FAULT_CHANCE ?= 0.5
FAULT_EPISODE ?= -1
SOAK_OUT    ?=
soak: k8s-bins helm-bin node-deps ## soak driver (bench/soak, docs/soak.md): EPISODES from SEED (FIRST: first episode; FAULTS: kinds or all/none; FAULT_CHANCE; FAULT_EPISODE: the only one with a fault; SOAK_OUT: artefacts) on the real node
	SOAK_EPISODES=$(EPISODES) SOAK_SEED=$(SEED) SOAK_FIRST=$(FIRST) SOAK_FAULTS=$(FAULTS) SOAK_FAULT_CHANCE=$(FAULT_CHANCE) SOAK_FAULT_EPISODE=$(FAULT_EPISODE) SOAK_OUT=$(SOAK_OUT) \
		$(GO) test -count=1 -v -timeout 0 -run '^TestSoak$$' ./bench/soak

test-versions: k8s-bins ## every supported release: the differential test against each kubelet (builds each oracle once: 6-12 CPU-minutes each cold), the chart on each API server (builds the older kube-apiservers once) and the avoidance webhook on the v1.34 API server and scheduler
	PRESSURE_DIFFERENTIAL_RELEASES=all $(GO) test -count=1 -timeout 90m ./test/differential/
	PRESSURE_BUILD=1 $(GO) test -count=1 -timeout 90m ./test/chartcompat/ ./test/avoidwebhook/

test-unit: ## tests that need no cluster (seconds)
	$(GO) test -count=1 ./internal/...

test: node-lock-check ## every test: unit, integration (real apiserver), cgroup v2 guest (qemu) and end-to-end (real kubelet)
	@# lint, k8s-bins, helm-bin, node-deps and vm-deps side by side (hack/test-prep.sh): on a cold machine
	@# the Kubernetes build is the longest, and the others fit beside it.
	@GO=$(GO) MAKE=$(MAKE) hack/test-prep.sh
	@# The level-2 tests share one node lock; go test shows a test's own wait only when its package
	@# ends, so say here who holds it and wait, with a line every 30 s.
	@if [[ "$$(id -u)" == 0 ]]; then hack/cluster.sh node-lock; fi
	@# internal/... and cmd/... run with -race and then the cgroup v2 guest (test/vm/...) in one lane, the
	@# rest of ./... without -race in another, side by side; the guest's thrash case runs alone when both
	@# are done (hack/test-tiers.sh). hack/testtable prints what plain go test would, then each package's
	@# wall time.
	$(GO) build -o $(CACHE)/bin/testtable ./hack/testtable
	GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) TEST_RUNS=$(CACHE)/test-runs hack/test-tiers.sh $(CACHE)/bin/testtable

fuzz: ## run every fuzz target for FUZZTIME each (default 30s), one at a time, with a table of execs
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

# node-lock-check runs first in make test, before the minute of lint: a running demo cluster (which holds
# the node lock until make demo-down) stops make test at once, saying so; a test run holding it is named.
node-lock-check:
	@if [[ "$$(id -u)" == 0 ]]; then hack/cluster.sh node-lock --check; fi

demo: build k8s-bins node-deps ## bring up a local cluster, provoke memory pressure, show what happened
	@hack/demo.sh

demo-down: ## stop the demo cluster
	@hack/cluster.sh down

images: build ## OCI image tarballs of pressure-agent and pressure-janitor in bin/images (no Docker)
	$(GO) run ./hack/imagebuild -bin $(BIN) -out $(BIN)/images -registry pressure.local -tag $(VERSION) -revision $(COMMIT)

DIST_ARCHES   := amd64 arm64
# DIST is the output directory of dist and release (make release DIST=/tmp/x writes there instead).
DIST          ?= dist
DIST_ABS       = $(abspath $(DIST))
# CLI_PLATFORMS are the os/arch pairs of the kubectl-pressure archives; deploy/krew/pressure.yaml lists
# the same platforms (test/deploy/krew_test.go checks both). Windows gets a .zip, the krew norm. The
# unix archives also hold kubectl_complete-pressure, kubectl's plugin completion hook. A shorter list on
# the command line (make release CLI_PLATFORMS=linux/amd64, as test/release does) leaves the other
# platforms out of the krew manifest.
CLI_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
TAR           := tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0
dist: ## release archives (server: linux; kubectl-pressure: linux, darwin, windows), SHA256SUMS, krew manifest in dist/
	@command -v zip >/dev/null || { echo "dist: zip is needed for the windows archive (apt-get install zip)"; exit 1; }
	@rm -rf '$(DIST_ABS)' && mkdir -p '$(DIST_ABS)'
	@for arch in $(DIST_ARCHES); do \
		name="pressure_$(VERSION)_linux_$${arch}"; dir="$(DIST_ABS)/.build/$$name"; mkdir -p "$$dir"; \
		echo "dist: $$name.tar.gz"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$${arch} $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o "$$dir/" $(addprefix ./cmd/,$(BINARIES)); \
		cp README.md LICENSE "$$dir/"; \
		$(TAR) -C "$(DIST_ABS)/.build" -cf - "$$name" | gzip -n -9 > "$(DIST_ABS)/$$name.tar.gz"; \
	done
	@for plat in $(CLI_PLATFORMS); do \
		os="$${plat%/*}"; arch="$${plat#*/}"; name="kubectl-pressure_$(VERSION)_$${os}_$${arch}"; dir="$(DIST_ABS)/.build/$$name"; \
		exe=kubectl-pressure; [[ "$$os" != windows ]] || exe=kubectl-pressure.exe; \
		mkdir -p "$$dir"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o "$$dir/$$exe" ./cmd/kubectl-pressure; \
		cp README.md LICENSE "$$dir/"; \
		if [[ "$$os" == windows ]]; then \
			echo "dist: $$name.zip"; touch -d @0 "$$dir"/*; (cd "$$dir" && zip -X -q -9 "$(DIST_ABS)/$$name.zip" "$$exe" LICENSE README.md); \
		else \
			cp deploy/krew/kubectl_complete-pressure "$$dir/"; \
			echo "dist: $$name.tar.gz"; $(TAR) -C "$$dir" -cf - "$$exe" kubectl_complete-pressure LICENSE README.md | gzip -n -9 > "$(DIST_ABS)/$$name.tar.gz"; \
		fi; \
	done
	@rm -rf '$(DIST_ABS)/.build'
	@cd '$(DIST_ABS)' && sha256sum $$(ls *.tar.gz *.zip 2>/dev/null) > SHA256SUMS && cat SHA256SUMS
	@args=(-e '/^#/d' -e 's/@VERSION@/$(VERSION)/g'); \
	for plat in $(CLI_PLATFORMS); do \
		os="$${plat%/*}"; arch="$${plat#*/}"; ext=tar.gz; [[ "$$os" != windows ]] || ext=zip; \
		sum="$$(awk -v f="kubectl-pressure_$(VERSION)_$${os}_$${arch}.$$ext" '$$2==f{print $$1}' '$(DIST_ABS)/SHA256SUMS')"; \
		args+=(-e "s/@SHA256_$${os^^}_$${arch^^}@/$$sum/"); \
	done; \
	sed "$${args[@]}" deploy/krew/pressure.yaml | hack/krew-drop-unbuilt.awk > '$(DIST_ABS)/pressure.yaml'; \
	if grep -n '@' '$(DIST_ABS)/pressure.yaml'; then echo "dist: placeholders left in $(DIST)/pressure.yaml"; exit 1; fi
	@echo "dist: krew manifest $(DIST)/pressure.yaml"

# IMAGE_REGISTRY is the registry part of the release images' names and the packaged chart's
# image.registry: set it to where the images are pushed (docs/release.md). The default is the
# chart's, pressure.local, for images imported into the nodes' runtime (README "Install").
IMAGE_REGISTRY ?= pressure.local
SEMVER_RE      := ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$
release: ## make release VERSION=vX.Y.Z: dist, plus the images (OCI tarballs, per DIST_ARCHES) and the packaged chart, one SHA256SUMS (docs/release.md)
	@[[ "$(VERSION)" =~ $(SEMVER_RE) ]] || { echo "release: VERSION=$(VERSION) is not vMAJOR.MINOR.PATCH[-PRE] (make release VERSION=v0.1.0)"; exit 1; }
	@$(MAKE) --no-print-directory dist VERSION='$(VERSION)' DIST='$(DIST_ABS)' DIST_ARCHES='$(DIST_ARCHES)' CLI_PLATFORMS='$(CLI_PLATFORMS)'
	@for arch in $(DIST_ARCHES); do \
		dir="$(DIST_ABS)/.build/images_$${arch}"; mkdir -p "$$dir/bin"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$${arch} $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o "$$dir/bin/" ./cmd/pressure-agent ./cmd/pressure-janitor; \
		$(GO) run ./hack/imagebuild -bin "$$dir/bin" -out "$$dir" -arch $${arch} -registry '$(IMAGE_REGISTRY)' -tag '$(VERSION)' -revision '$(COMMIT)'; \
		for c in pressure-agent pressure-janitor; do mv "$$dir/$$c.tar" "$(DIST_ABS)/$${c}_$(VERSION)_linux_$${arch}.oci.tar"; done; \
	done
	@helm="$$(hack/install-helm.sh)"; chart="$(DIST_ABS)/.build/chart/pressure"; mkdir -p "$${chart%/*}"; \
		cp -r deploy/helm/pressure "$$chart"; \
		sed -i 's|^  registry: pressure.local$$|  registry: $(IMAGE_REGISTRY)|' "$$chart/values.yaml"; \
		grep -q '^  registry: $(IMAGE_REGISTRY)$$' "$$chart/values.yaml" || { echo "release: no image.registry line in $$chart/values.yaml"; exit 1; }; \
		"$$helm" package "$$chart" --version '$(patsubst v%,%,$(VERSION))' --app-version '$(VERSION)' -d '$(DIST_ABS)'
	@rm -rf '$(DIST_ABS)/.build'
	@cd '$(DIST_ABS)' && sha256sum $$(ls *.tar.gz *.zip *.oci.tar *.tgz 2>/dev/null | sort) pressure.yaml > SHA256SUMS && cat SHA256SUMS
	@echo "release: $(VERSION) in $(DIST) (publish it: docs/release.md)"

helm: ## install the pinned helm into $(CACHE)/bin and lint the chart
	@helm="$$(hack/install-helm.sh)" && "$$helm" lint deploy/helm/pressure && "$$helm" lint deploy/helm/pressure -f deploy/helm/pressure/ci/all-values.yaml

clean: ## remove build output (not the Kubernetes cache)
	rm -rf $(BIN) dist
