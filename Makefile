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

# `make` alone builds everything (the rules below define archives first)
.DEFAULT_GOAL := all

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
DEPS_SET = $(if $(filter-out tools install install-testtools uninstall $(TOOLS) $(BENCH_PROGS),\
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
# The tree (docs/design.md, "Layout"), each library an archive, linked in
# this order (each uses only those after it):
#   tcd/        the daemon: tlsd.c and its modules (libtlsd.a, for the tests)
#   lib/bpf/    the BPF side: loader, the one way to the maps, kernel features
#   lib/model/  the pure models: policies, contention statistics, exports, membership
#   lib/client/ the control socket's client side (tlsctl: json-c and libc)
#   lib/util/   logging, units, non-blocking I/O
# A directory sees the headers of those below it only (INC_dir), so that a
# library cannot include the daemon's, nor tlsctl anything of the BPF side.
INC_lib/util := -Ilib/util
INC_lib/client := -Ilib/client
INC_lib/model := -Ilib/model -Ibpf
INC_lib/bpf := -I$(OUT) -Ilib/bpf -Ilib/util -Ibpf
INC_tcd := -I$(OUT) -Itcd -Ilib/bpf -Ilib/model -Ilib/client -Ilib/util -Ibpf
INC_tools/tlsctl := -Ilib/client -Ilib/model -Ilib/util -Ibpf
INC_tools/tls-classifier := -I$(OUT) -Ilib/bpf -Ilib/util -Ibpf
INC_ALL := $(INC_tcd)
# -pthread: discovery reads /proc off the loop thread (tcd/proc_reader.c);
# -MMD -MP: each object's headers, as the compiler saw them
BASE_CFLAGS = -std=gnu11 -pthread $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) $(PKG_CFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(INC_ALL)
DEP_FLAGS := -MMD -MP
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

# Fixture tables list fields by position and leave the trailing ones zero.
TABLE_CFLAGS := -Itests/bpf -Wno-missing-field-initializers

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) \
	-Wno-unused-parameter -I$(OUT) -Ibpf

SKEL := $(OUT)/tls_classifier.skel.h
LIBS := tcd lib/bpf lib/model lib/client lib/util
# the daemon's modules without its main
SRCS_tcd := $(filter-out tcd/tlsd.c,$(wildcard tcd/*.c))
$(foreach l,$(filter lib/%,$(LIBS)),$(eval SRCS_$(l) := $(wildcard $(l)/*.c)))
# libtlsd.a, libtlsbpf.a, libtlsmodel.a, ...
ar_name = lib$(if $(filter tcd,$(1)),tlsd,tls$(notdir $(1))).a
ARCHIVES := $(foreach l,$(LIBS),$(OUT)/$(call ar_name,$(l)))
SAN_ARCHIVES := $(foreach l,$(LIBS),$(OUT)/san/$(call ar_name,$(l)))
CLIENT_ARCHIVES := $(foreach l,lib/client lib/model lib/util,$(OUT)/$(call ar_name,$(l)))
BPF_ARCHIVES := $(foreach l,lib/bpf lib/util,$(OUT)/$(call ar_name,$(l)))
JSON_LIBS = $(LDFLAGS) $(shell pkg-config --libs json-c) -lm
$(foreach l,$(LIBS),$(eval $(OUT)/$(call ar_name,$(l)): \
	$(patsubst %.c,$(OUT)/obj/%.o,$(SRCS_$(l)))))
$(foreach l,$(LIBS),$(eval $(OUT)/san/$(call ar_name,$(l)): \
	$(patsubst %.c,$(OUT)/san/%.o,$(SRCS_$(l)))))
ALL_SRCS := $(foreach l,$(LIBS),$(SRCS_$(l)))

# libFuzzer harnesses (tests/fuzz/): clang's libFuzzer, the parsers (and the
# little they call) built again in an object directory of their own, with
# coverage for the fuzzer (fuzzer-no-link) under ASan and UBSan.
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_SRCS := tcd/ctl.c tcd/config.c tcd/rules.c tcd/procfs.c tcd/sockdiag.c lib/util/units.c \
	lib/util/log.c lib/model/policy.c tcd/trust.c tcd/config_trust.c tcd/http.c lib/util/nbio.c lib/util/fs.c \
	tcd/state_file.c
FUZZ_OBJS := $(patsubst %.c,$(OUT)/fuzz/obj/%.o,$(FUZZ_SRCS))
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
# `make fuzz`: seconds per harness; `make check`: the same, short.
# FUZZ_HARNESSES: some of them only ("ctl rules").
FUZZ_SECONDS ?= 300
FUZZ_CHECK_SECONDS ?= 20
FUZZ_HARNESSES ?=

TOOLS := $(OUT)/tlsd $(OUT)/tls-classifier $(OUT)/tls-emu $(OUT)/tlsctl $(OUT)/psemu
TESTS := $(OUT)/test-unit $(OUT)/test-bpf $(OUT)/stale_burst.bpf.o $(OUT)/libtls-refuse.so \
	 $(OUT)/san/tlsd $(FUZZERS)
BENCH_PROGS := $(OUT)/bench-classifier $(OUT)/bench-discovery $(OUT)/bench-stats $(OUT)/bench-ctl \
	       $(OUT)/bench-scrape $(OUT)/bench-serve
BENCH := $(BENCH_PROGS) $(OUT)/empty.bpf.o
# Headers of every program built from several sources in one step (the
# tests and benchmarks): all of them, coarse but never stale.
ALL_HDRS := $(wildcard bpf/*.h lib/*/*.h tcd/*.h tests/*/*.h)

.PHONY: all tools deps build-deps install-testtools check check-pkg check-kernels fuzz demo bench bench-classifier bench-rotation bench-discovery bench-loop bench-stats bench-ctl install uninstall clean format
.DELETE_ON_ERROR:

all: $(TOOLS) $(TESTS) $(BENCH)

$(TOOLS): VERSION

tools: $(TOOLS) $(BENCH_PROGS)

deps:
	$(Q)sh tools/install-deps.sh

build-deps:
	$(Q)sh tools/install-deps.sh --check $(DEPS_SET)

$(OUT): | $(BUILD_PREREQ)
	$(Q)mkdir -p $@

$(OUT)/vmlinux.h: | $(OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUT)/tls_classifier.bpf.o: bpf/tls_classifier.bpf.c $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEP_FLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/empty.bpf.o: tests/bench/empty.bpf.c $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The BPF tier's program of "another version" (a burst order laid out otherwise).
$(OUT)/stale_burst.bpf.o: tests/bpf/stale_burst.bpf.c bpf/tls_common.h $(OUT)/vmlinux.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL): $(OUT)/tls_classifier.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name tls_classifier > $@

# One object per source, in a tree like the source's. VERSION: the programs
# say it (TLS_VERSION), so a new one rebuilds them. The skeleton is made
# before the one source that includes it (order only: the object's .d file
# has the rest), so that tlsctl alone builds without clang or bpftool.
inc_of = $(or $(INC_$(basename $(1))),$(INC_$(patsubst %/,%,$(dir $(1)))))
$(OUT)/obj/lib/bpf/classifier.o $(OUT)/san/lib/bpf/classifier.o \
	$(OUT)/fuzz/obj/lib/bpf/classifier.o: | $(SKEL)
$(OUT)/obj/%.o: %.c VERSION | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(call inc_of,$<) $(DEP_FLAGS) -c $< -o $@

$(OUT)/san/%.o: %.c VERSION | $(OUT)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(call inc_of,$<) $(SAN_FLAGS) $(DEP_FLAGS) -c $< -o $@

$(OUT)/fuzz/obj/%.o: %.c VERSION | $(OUT)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BASE_CFLAGS) $(call inc_of,$<) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
		$(DEP_FLAGS) -c $< -o $@

$(OUT)/%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(FUZZERS): $(OUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) $(ALL_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(PKG_LIBS) -o $@

$(OUT)/tlsd: $(OUT)/obj/tcd/tlsd.o $(ARCHIVES)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(filter %.o %.a,$^) $(PKG_LIBS) -o $@

# The BPF side's tool: libbpf and what the BPF side uses (libnl, libmnl), none of the
# daemon's libraries (--as-needed drops those it names but does not use).
$(OUT)/tls-classifier: $(OUT)/obj/tools/tls-classifier.o $(BPF_ARCHIVES)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Wl,--as-needed $(filter %.o %.a,$^) $(PKG_LIBS) -o $@

# The client: json-c and the C library, nothing of the daemon's or the BPF
# side's (tests/unit checks its ldd).
$(OUT)/tlsctl: $(OUT)/obj/tools/tlsctl.o $(CLIENT_ARCHIVES)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Wl,--as-needed $(filter %.o %.a,$^) $(JSON_LIBS) -o $@

$(OUT)/psemu: tests/emu/psemu.c tests/emu/emu_addr.h | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) $(LDFLAGS) $< \
		$(shell pkg-config --cflags --libs json-c) -lm -o $@

$(OUT)/tls-emu: tests/emu/tls-emu.c tests/emu/emu_addr.h | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(VERSION_DEF) $(LDFLAGS) -pthread $< -o $@

# tlsd under ASan and UBSan, for a namespace test (tests/run-tests.sh): what
# the unit tests do not reach (netlink replies, sockets) runs sanitized too
$(OUT)/san/tlsd: $(OUT)/san/tcd/tlsd.o $(SAN_ARCHIVES)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) $(filter %.o %.a,$^) $(PKG_LIBS) -o $@

$(OUT)/test-unit: $(wildcard tests/unit/*.c) $(SAN_ARCHIVES) $(ALL_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(wildcard tests/unit/*.c) $(SAN_ARCHIVES) \
		$(PKG_LIBS) -lcmocka -o $@

$(OUT)/test-bpf: tests/bpf/test_fixtures.c $(SAN_ARCHIVES) $(ALL_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(TABLE_CFLAGS) $< $(SAN_ARCHIVES) $(PKG_LIBS) \
		-lcmocka -o $@

# A kernel without chosen features, for the degraded-mode tests (LD_PRELOAD).
$(OUT)/libtls-refuse.so: tests/fault/kernel_refuse.c | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CFLAGS) -shared -fPIC $< -ldl -o $@

$(OUT)/bench-discovery $(OUT)/bench-stats $(OUT)/bench-ctl: $(OUT)/bench-%: \
		tests/bench/bench_%.c $(ARCHIVES) $(ALL_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(ARCHIVES) $(PKG_LIBS) -o $@

# a plain HTTP client and server: no library of tlsd's
$(OUT)/bench-scrape $(OUT)/bench-serve: $(OUT)/bench-%: tests/bench/bench_%.c tests/bench/ipv4_port.h | $(OUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@

$(OUT)/bench-classifier: tests/bench/bench_classifier.c $(ARCHIVES) $(ALL_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(TABLE_CFLAGS) $< $(ARCHIVES) $(PKG_LIBS) -o $@

# files only, and not the unpacked kernels of check-kernels (whose trees hold
# directories named *.d: make stopped on them at the next run)
-include $(shell find $(OUT) -name '*.d' -type f -not -path '$(OUT)/kernels/*' 2>/dev/null)

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
	install -m 0644 tests/emu/tls-emu.1 $(DESTDIR)$(MAN1DIR)/tls-emu.1
	install -m 0755 $(OUT)/psemu $(DESTDIR)$(BINDIR)/psemu
	install -m 0644 tests/emu/psemu.1 $(DESTDIR)$(MAN1DIR)/psemu.1
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
	clang-format -i bpf/*.c bpf/*.h lib/*/*.c lib/*/*.h tcd/*.c tcd/*.h tools/*.c tests/*/*.c tests/*/*.h

clean:
	rm -rf $(OUT)
