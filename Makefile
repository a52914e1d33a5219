# SPDX-License-Identifier: GPL-2.0-only
#
# tlsd: `make` builds, `make check` runs every test tier (a short run of each
# fuzzer included), `make fuzz` runs the libFuzzer harnesses for longer
# (FUZZ_SECONDS each), `make demo` runs the demo, `make bench` the
# TensorLights benchmark, `make bench-classifier` the classifier benchmark.
# `make tools` builds only what is installed (the Debian package's build).
# V=1 shows commands.
# `make check`, `demo`, `fuzz`, `bench*` and `deps` install missing Debian
# packages first (tools/install-deps.sh); plain `make` and `make install`
# never do: they stop and name the missing packages instead.

OUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
MAN8DIR ?= $(PREFIX)/share/man/man8
MAN1DIR ?= $(PREFIX)/share/man/man1
MAN5DIR ?= $(PREFIX)/share/man/man5
# bash-completion's own directory where it says so, else Debian's
BASHCOMPDIR ?= $(or $(shell pkg-config --variable=completionsdir bash-completion 2>/dev/null),/usr/share/bash-completion/completions)
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BINDIR ?= $(PREFIX)/bin
# the benchmark programs of `make install-testtools`: not on PATH
LIBEXECDIR ?= $(PREFIX)/libexec/tlsd

CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/')

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# The goals that may run apt-get (through `deps`) before they build; every
# other goal only checks that the packages are there (`build-deps`).
DEPS_GOALS := deps check check-% fuzz demo bench bench-%
ifneq ($(filter $(DEPS_GOALS),$(MAKECMDGOALS)),)
BUILD_PREREQ := deps
else
BUILD_PREREQ := build-deps
endif
# What `build-deps` checks: the tools' packages only when nothing else is
# asked for (the Debian package's build has no cmocka or libFuzzer).
DEPS_SET := $(if $(filter-out tools install install-testtools uninstall $(TOOLS) $(BENCH_PROGS),\
	$(or $(MAKECMDGOALS),all)),all,tools)

# Evaluated when a recipe runs, so after `deps` has installed pkg-config's data.
PKGS := libbpf libnl-3.0 libnl-route-3.0 libmnl json-c libconfig libsystemd
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(LDFLAGS) $(shell pkg-config --libs $(PKGS)) -lelf -lz -lm

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# One version for every program (--version), from the VERSION file only: no
# git describe, so that a build from a release tarball and one from the tree
# at that release say the same.
VERSION := $(shell cat VERSION)
$(if $(VERSION),,$(error the VERSION file is missing or empty))
VERSION_DEF := -DTLS_VERSION='"$(VERSION)"'
# -pthread: discovery reads /proc off the loop thread (tcd/proc_reader.c)
ALL_CFLAGS = -std=gnu11 -pthread $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) -I$(OUT) -Ibpf -Itcd $(PKG_CFLAGS)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

# Fixture tables list fields by position and leave the trailing ones zero.
TABLE_CFLAGS := -Itests/bpf -Wno-missing-field-initializers

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) \
	-Wno-unused-parameter -I$(OUT) -Ibpf

SKEL := $(OUT)/tls_classifier.skel.h
LIB_SRCS := tcd/classifier.c tcd/cls_maps.c tcd/kernel_features.c tcd/endpoint.c tcd/log.c tcd/bpffs.c tcd/policy.c \
	tcd/units.c tcd/config.c tcd/shaper.c tcd/jobs.c tcd/rules.c \
	tcd/procfs.c tcd/proc_reader.c tcd/sockdiag.c tcd/proc_conn.c tcd/discover.c \
	tcd/ctl.c tcd/tlsd_ctl.c tcd/stats.c tcd/stats_export.c tcd/stats_merge.c tcd/stats_group.c tcd/stats_cmdare.c tcd/stats_types.c tcd/stats_sampler.c tcd/stats_ingress.c tcd/map_batch.c tcd/tc_filters.c \
	tcd/trust.c tcd/config_trust.c tcd/tree_watch.c tcd/tc_state.c tcd/tree_heal.c \
	tcd/http.c tcd/metrics.c tcd/tlsd_metrics.c tcd/nbio.c tcd/pin_layout.c
LIB_OBJS := $(patsubst tcd/%.c,$(OUT)/obj/%.o,$(LIB_SRCS))
SAN_OBJS := $(patsubst tcd/%.c,$(OUT)/san/%.o,$(LIB_SRCS))

# libFuzzer harnesses (tests/fuzz/): clang's libFuzzer, the parsers (and the
# little they call) built again in an object directory of their own, with
# coverage for the fuzzer (fuzzer-no-link) under ASan and UBSan.
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_SRCS := tcd/ctl.c tcd/config.c tcd/rules.c tcd/procfs.c tcd/sockdiag.c tcd/units.c \
	tcd/log.c tcd/policy.c tcd/trust.c tcd/config_trust.c tcd/http.c tcd/nbio.c
FUZZ_OBJS := $(patsubst tcd/%.c,$(OUT)/fuzz/obj/%.o,$(FUZZ_SRCS))
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
# `make fuzz`: seconds per harness; `make check`: the same, short.
# FUZZ_HARNESSES: some of them only ("ctl rules").
FUZZ_SECONDS ?= 300
FUZZ_CHECK_SECONDS ?= 20
FUZZ_HARNESSES ?=

TOOLS := $(OUT)/tlsd $(OUT)/tls-classifier $(OUT)/tls-emu $(OUT)/tlsctl $(OUT)/psemu
TESTS := $(OUT)/test-unit $(OUT)/test-bpf $(OUT)/libtls-refuse.so $(FUZZERS)
BENCH_PROGS := $(OUT)/bench-classifier $(OUT)/bench-discovery $(OUT)/bench-stats $(OUT)/bench-ctl \
	       $(OUT)/bench-scrape
BENCH := $(BENCH_PROGS) $(OUT)/empty.bpf.o

.PHONY: all tools deps build-deps install-testtools check check-pkg check-kernels fuzz demo bench bench-classifier bench-rotation bench-discovery bench-loop bench-stats bench-ctl install uninstall clean format
.DELETE_ON_ERROR:

all: $(TOOLS) $(TESTS) $(BENCH)

$(TOOLS): VERSION

tools: $(TOOLS) $(BENCH_PROGS)

deps:
	$(Q)sh tools/install-deps.sh

build-deps:
	$(Q)sh tools/install-deps.sh --check $(DEPS_SET)

$(OUT) $(OUT)/obj $(OUT)/san $(OUT)/fuzz/obj: | $(BUILD_PREREQ)
	$(Q)mkdir -p $@

$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUT)/tls_classifier.bpf.o: bpf/tls_classifier.bpf.c bpf/tls_common.h bpf/tls_flowlet.h \
		bpf/tls_flow_slot.h bpf/tls_burst.h bpf/tls_ingress.h $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/empty.bpf.o: tests/bench/empty.bpf.c $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL): $(OUT)/tls_classifier.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name tls_classifier > $@

# Every user-space object may include the skeleton: generate it first.
$(OUT)/obj/%.o: tcd/%.c $(wildcard tcd/*.h) bpf/tls_common.h $(SKEL) | $(OUT)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUT)/san/%.o: tcd/%.c $(wildcard tcd/*.h) bpf/tls_common.h $(SKEL) | $(OUT)/san
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUT)/fuzz/obj/%.o: tcd/%.c $(wildcard tcd/*.h) bpf/tls_common.h $(SKEL) | $(OUT)/fuzz/obj
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZERS): $(OUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) $(wildcard tcd/*.h)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(PKG_LIBS) -o $@

$(OUT)/tlsd: tcd/tlsd.c $(LIB_OBJS) $(wildcard tcd/*.h)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

$(OUT)/tls-classifier: tools/tls-classifier.c $(LIB_OBJS) $(wildcard tcd/*.h)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

$(OUT)/tlsctl: tools/tlsctl.c $(LIB_OBJS) $(wildcard tcd/*.h)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

$(OUT)/psemu: tools/psemu.c tools/emu_addr.h | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) $(LDFLAGS) $< \
		$(shell pkg-config --cflags --libs json-c) -lm -o $@

$(OUT)/tls-emu: tools/tls-emu.c tools/emu_addr.h | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) $(LDFLAGS) -pthread $< -o $@

$(OUT)/test-unit: $(wildcard tests/unit/*.c tests/unit/*.h) $(SAN_OBJS) $(wildcard tcd/*.h) \
		bpf/tls_flowlet.h bpf/tls_burst.h
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(wildcard tests/unit/*.c) $(SAN_OBJS) \
		$(PKG_LIBS) -lcmocka -o $@

$(OUT)/test-bpf: tests/bpf/test_fixtures.c tests/bpf/packets.h $(SAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(TABLE_CFLAGS) $< $(SAN_OBJS) $(PKG_LIBS) \
		-lcmocka -o $@

# A kernel without chosen features, for the degraded-mode tests (LD_PRELOAD).
$(OUT)/libtls-refuse.so: tests/fault/kernel_refuse.c | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CFLAGS) -shared -fPIC $< -ldl -o $@

$(OUT)/bench-discovery: tests/bench/bench_discovery.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

$(OUT)/bench-stats: tests/bench/bench_stats.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

$(OUT)/bench-ctl: tests/bench/bench_ctl.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

# a plain HTTP client: no library of tlsd's
$(OUT)/bench-scrape: tests/bench/bench_scrape.c | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@

$(OUT)/bench-classifier: tests/bench/bench_classifier.c tests/bpf/packets.h $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(TABLE_CFLAGS) $< $(LIB_OBJS) $(PKG_LIBS) -o $@

check: all
	$(Q)OUT=$(OUT) FUZZ_CHECK_SECONDS=$(FUZZ_CHECK_SECONDS) sh tests/run-tests.sh

# The packaging tier alone (tests/pkg/): builds the .debs from a fresh clone
# of HEAD, installs, runs and purges tlsd (~40 s).
check-pkg: tools
	$(Q)OUT=$(OUT) TLS_TIERS=pkg sh tests/run-tests.sh

# Every libFuzzer harness for FUZZ_SECONDS, over a temporary copy of its
# seed corpus (tests/fuzz/corpus/): tests/fuzz/run-fuzz.sh.
fuzz: $(FUZZERS)
	$(Q)OUT=$(OUT) sh tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

# Boots Debian's distribution kernels under qemu (TCG) and runs the BPF tier
# and tlsd's lifecycle test inside each: tests/kernels/.
check-kernels: all
	$(Q)OUT=$(OUT) sh tests/kernels/check-kernels.sh

demo: all
	$(Q)OUT=$(OUT) sh tools/demo.sh

# The TensorLights benchmark (about 15 minutes): tests/bench/RESULTS.md.
bench: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-tensorlights.sh

bench-classifier: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-classifier.sh

bench-rotation: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-rotation.sh

bench-ctl: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-ctl.sh

bench-discovery: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-discovery.sh

bench-loop: all
	$(Q)OUT=$(OUT) sh tests/bench/bench-loop.sh

bench-stats: all
	$(Q)$(OUT)/bench-stats

# What a PS host runs. The emulators and benchmark programs are for test
# hosts: `make install-testtools` (Debian: tlsd-testtools).
install: $(OUT)/tlsd $(OUT)/tls-classifier $(OUT)/tlsctl
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN8DIR)
	install -m 0755 $(OUT)/tlsd $(DESTDIR)$(SBINDIR)/tlsd
	install -m 0755 $(OUT)/tls-classifier $(DESTDIR)$(SBINDIR)/tls-classifier
	install -m 0644 tools/tls-classifier.8 $(DESTDIR)$(MAN8DIR)/tls-classifier.8
	install -m 0644 tcd/tlsd.8 $(DESTDIR)$(MAN8DIR)/tlsd.8
	# tlsctl in bin: members of control_group run it too
	install -m 0755 $(OUT)/tlsctl $(DESTDIR)$(BINDIR)/tlsctl
	install -m 0644 tools/tlsctl.8 $(DESTDIR)$(MAN8DIR)/tlsctl.8
	install -d $(DESTDIR)$(SYSCONFDIR)/tlsd $(DESTDIR)$(UNITDIR)
	# never overwrite a configuration in use
	[ -e $(DESTDIR)$(SYSCONFDIR)/tlsd/tlsd.conf ] || \
		install -m 0644 config/tlsd.conf $(DESTDIR)$(SYSCONFDIR)/tlsd/tlsd.conf
	for u in tlsd.service tlsd@.service; do \
		sed 's|/usr/local/sbin|$(SBINDIR)|; s|/etc/tlsd|$(SYSCONFDIR)/tlsd|' config/$$u \
			>$(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	# /run/tlsd and the control group: systemd-tmpfiles and systemd-sysusers
	# apply them at boot (or run them once after installing)
	install -d $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 0644 config/tlsd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/tlsd.conf
	install -m 0644 config/tlsd.sysusers $(DESTDIR)$(SYSUSERSDIR)/tlsd.conf
	install -d $(DESTDIR)$(MAN5DIR) $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 config/tlsd.conf.5 $(DESTDIR)$(MAN5DIR)/tlsd.conf.5
	# one file for the three commands: bash-completion loads it by each name
	install -m 0644 completion/tlsd.bash $(DESTDIR)$(BASHCOMPDIR)/tlsd
	ln -sf tlsd $(DESTDIR)$(BASHCOMPDIR)/tlsctl
	ln -sf tlsd $(DESTDIR)$(BASHCOMPDIR)/tls-classifier

# psemu and tls-emu on PATH (their man pages in section 1), the benchmark
# programs in LIBEXECDIR.
install-testtools: $(OUT)/tls-emu $(OUT)/psemu $(BENCH_PROGS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(LIBEXECDIR)
	install -m 0755 $(OUT)/tls-emu $(DESTDIR)$(BINDIR)/tls-emu
	install -m 0644 tools/tls-emu.1 $(DESTDIR)$(MAN1DIR)/tls-emu.1
	install -m 0755 $(OUT)/psemu $(DESTDIR)$(BINDIR)/psemu
	install -m 0644 tools/psemu.1 $(DESTDIR)$(MAN1DIR)/psemu.1
	install -m 0755 $(BENCH_PROGS) $(DESTDIR)$(LIBEXECDIR)/

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/tlsd $(DESTDIR)$(SBINDIR)/tls-classifier \
		$(DESTDIR)$(BINDIR)/tls-emu $(DESTDIR)$(BINDIR)/tlsctl \
		$(DESTDIR)$(MAN8DIR)/tls-classifier.8 $(DESTDIR)$(MAN8DIR)/tlsd.8 \
		$(DESTDIR)$(MAN8DIR)/tlsctl.8 $(DESTDIR)$(BINDIR)/psemu \
		$(DESTDIR)$(MAN1DIR)/psemu.1 $(DESTDIR)$(MAN1DIR)/tls-emu.1 \
		$(DESTDIR)$(UNITDIR)/tlsd.service $(DESTDIR)$(UNITDIR)/tlsd@.service \
		$(DESTDIR)$(TMPFILESDIR)/tlsd.conf $(DESTDIR)$(SYSUSERSDIR)/tlsd.conf \
		$(DESTDIR)$(MAN5DIR)/tlsd.conf.5 $(DESTDIR)$(BASHCOMPDIR)/tlsd \
		$(DESTDIR)$(BASHCOMPDIR)/tlsctl $(DESTDIR)$(BASHCOMPDIR)/tls-classifier
	rm -rf $(DESTDIR)$(LIBEXECDIR)

format:
	clang-format -i bpf/*.c bpf/*.h tcd/*.c tcd/*.h tools/*.c tests/*/*.c tests/*/*.h

clean:
	rm -rf $(OUT)
