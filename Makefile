# mbsim-run: build, run, test. Quick start on a fresh Debian 12 machine (as root):
#   make run     installs missing dependencies, builds, runs decks/quickstart.yaml
#   make test    installs missing dependencies, builds, runs every test
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3
CC ?= cc
BUILD ?= build
OPT ?= -O2 -g
WERROR ?= -Werror
DECK ?= decks/quickstart.yaml
VERSION := 0.1.0

PKGS := yaml-0.1 hdf5 libdeflate libisal
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CPPFLAGS += -Iinclude -Isrc -I/usr/include/suitesparse -DMBS_VERSION=\"$(VERSION)\" \
            -D_POSIX_C_SOURCE=200809L
# hardening of the normal build: stack canaries, checked string and memory calls (FORTIFY
# needs optimisation; the sanitizer builds set HARDEN= and instrument instead)
HARDEN ?= -fstack-protector-strong -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
# position-independent objects: the same ones go into libmbsim.a, libmbsim.so and the command
PIC ?= -fPIC
CFLAGS_ALL = -std=c11 -Wall -Wextra -Wpedantic -Wshadow $(WERROR) $(OPT) $(HARDEN) $(SAN) $(PIC) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lumfpack -lklu -lamd -lspqr -lcholmod -lsuitesparseconfig -lopenblas -lm $(LDLIBS)

LIB_SRC := $(sort $(wildcard src/util/*.c src/deck/*.c src/model/*.c src/elements/*.c \
                             src/contact/*.c src/solver/*.c src/output/*.c src/run/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/check_main.o

.PHONY: all deps tools run test test-unit test-integration test-tools test-asan test-valgrind fuzz \
        fuzz-restart bench bench-dice bench-peers \
        install clean check-layering format-check

all: $(BUILD)/mbsim-run $(BUILD)/libmbsim.a $(BUILD)/libmbsim.so

deps:
	@bash scripts/install-deps

# ParaView (pvpython) and Xvfb for scripts/paraview/view.py, without the cluster tools
tools:
	@bash scripts/install-deps --viewer

$(BUILD)/%.o: %.c $(wildcard include/mbsim/*.h) $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libmbsim.a: $(LIB_OBJ)
	@mkdir -p $(BUILD)
	rm -f $@ && ar rcs $@ $^

# the shared library (the Python package loads it with ctypes)
$(BUILD)/libmbsim.so: $(LIB_OBJ)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -shared -Wl,-soname,libmbsim.so $(LIB_OBJ) $(LDLIBS_ALL) -o $@

$(BUILD)/mbsim-run: $(CLI_OBJ) $(BUILD)/libmbsim.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) $(CLI_OBJ) $(BUILD)/libmbsim.a $(LDLIBS_ALL) -o $@

$(BUILD)/tests/suites.h: $(TEST_SRC)
	@mkdir -p $(dir $@)
	sed -n 's/^Suite \*\([a-z_0-9]*_suite\)(void).*/MBS_SUITE(\1)/p' $(TEST_SRC) > $@

$(BUILD)/tests/check_main.o: tests/check_main.c $(BUILD)/tests/suites.h
	$(CC) $(CPPFLAGS) -I$(BUILD)/tests $(PKG_CFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/test_runner: $(TEST_OBJ) $(BUILD)/libmbsim.a
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) $(TEST_OBJ) $(BUILD)/libmbsim.a \
	  $(shell pkg-config --libs check) $(LDLIBS_ALL) -o $@

run: deps
	$(MAKE) all
	./$(BUILD)/mbsim-run $(DECK) -o $(BUILD)/$(notdir $(DECK:.yaml=.h5))

test: deps
	$(MAKE) all $(BUILD)/test_runner
	$(MAKE) check-layering test-unit test-integration

test-unit: $(BUILD)/test_runner
	cd $(BUILD) && CK_DEFAULT_TIMEOUT=600 ./test_runner

test-integration: $(BUILD)/mbsim-run
	MBSIM=$(abspath $(BUILD)/mbsim-run) PYTHON=$(PYTHON) bash tests/run-integration

# the post-processing and cluster tools against the real programs: ParaView (pvpython), the
# Python scripts, sweeps through GNU parallel and a single-node Slurm started on this machine
test-tools:
	bash scripts/install-deps --tools
	$(MAKE) all
	MBSIM=$(abspath $(BUILD)/mbsim-run) PYTHON=$(PYTHON) bash tests/run-tools

# AddressSanitizer + UndefinedBehaviorSanitizer build in its own directory
test-asan: deps
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" HARDEN= \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	  build-asan/mbsim-run build-asan/test_runner
	cd build-asan && CK_FORK=no ./test_runner
	MBSIM=$(abspath build-asan/mbsim-run) PYTHON=$(PYTHON) QUICK=1 bash tests/run-integration

# valgrind (memcheck, full leak check) over every shipped deck, each cut to three steps, with
# both linear solvers;
# any error or definite/possible leak fails the target
VALGRIND ?= valgrind --error-exitcode=1 --leak-check=full --quiet
test-valgrind: deps
	$(MAKE) all
	@command -v valgrind >/dev/null || { echo "test-valgrind: valgrind is not installed"; false; }
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; n=0; \
	for d in decks/*.yaml decks/contacts/*.yaml decks/beams/*.yaml; do \
	  t=$$(./$(BUILD)/mbsim-run $$d --check | \
	       awk '/^time:/ { dt = $$4; te = $$8; print (3 * dt < te ? 3 * dt : te) }'); \
	  for ls in umfpack klu; do \
	    echo "valgrind $$d (--t-end $$t, $$ls)"; \
	    $(VALGRIND) ./$(BUILD)/mbsim-run $$d -o $$out/run.h5 --quiet --t-end $$t --overwrite \
	      --set solver.linear_solver=$$ls || { echo "test-valgrind: $$d ($$ls) failed"; exit 1; }; \
	  done; \
	  n=$$((n + 1)); \
	done; echo "test-valgrind: $$n decks clean with umfpack and klu"

# libFuzzer harness for the deck reader and compiler (clang: scripts/install-deps --fuzz):
# builds build-fuzz/fuzz_deck with ASan + UBSan and runs it for FUZZ_SECONDS on one core over
# tests/fuzz/corpus, seeded with the shipped decks, the bad and hazard decks and
# tests/fuzz/seeds.
# Crashes land in build-fuzz/ (crash-*, leak-*, timeout-*); keep each as a regression case
# in tests/fuzz/regressions/ (test_fuzz_regressions.c loads them all).
FUZZ_SECONDS ?= 60
FUZZ_FLAGS ?=
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" HARDEN= \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	  build-fuzz/fuzz_deck
	mkdir -p tests/fuzz/corpus
	for f in decks/*.yaml tests/bad/*.yaml tests/hazards/*.yaml tests/fuzz/seeds/*; do \
	  cp -n "$$f" "tests/fuzz/corpus/seed-$$(basename "$$f")"; done
	build-fuzz/fuzz_deck -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=16384 -dict=tests/fuzz/deck.dict -artifact_prefix=build-fuzz/ -print_final_stats=1 \
	  $(FUZZ_FLAGS) tests/fuzz/corpus

$(BUILD)/tests/fuzz/fuzz_deck.o $(BUILD)/tests/test_fuzz_regressions.o: tests/fuzz/fuzz_input.h

# libFuzzer harness for the restart reader (tests/fuzz/fuzz_restart.c), the same way: the
# corpus tests/fuzz/restart-corpus is seeded with short runs of decks/double_pendulum.yaml
# (em, and genalpha with its accelerations) written by the normal build. An input that crashes or hangs inside HDF5 (not
# instrumented, and what the reader's child process is for) is kept in
# tests/fuzz/restart-regressions/, which tests/integration/test_corrupt_files.py replays
# through mbsim-run --restart.
# HDF5 has bugs of its own on damaged files: the fuzzer goes on past them (fork mode) and
# keeps each crash and hang in build-fuzz/restart-*; `build-fuzz/fuzz_restart FILE` shows
# where one happened.
FUZZ_RESTART_FLAGS ?= -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
fuzz-restart:
	$(MAKE) all
	$(MAKE) BUILD=build-fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" HARDEN= \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	  build-fuzz/fuzz_restart
	mkdir -p tests/fuzz/restart-corpus
	./$(BUILD)/mbsim-run decks/double_pendulum.yaml --quiet --overwrite --t-end 0.02 \
	  -o tests/fuzz/restart-corpus/seed-em.h5
	./$(BUILD)/mbsim-run decks/double_pendulum.yaml --quiet --overwrite --t-end 0.02 \
	  --integrator genalpha --set output.xdmf=false -o tests/fuzz/restart-corpus/seed-genalpha.h5
	rm -f tests/fuzz/restart-corpus/*.xmf
	ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
	build-fuzz/fuzz_restart -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=131072 -dict=tests/fuzz/restart.dict -artifact_prefix=build-fuzz/restart- \
	  -print_final_stats=1 $(FUZZ_RESTART_FLAGS) $(FUZZ_FLAGS) tests/fuzz/restart-corpus

$(BUILD)/fuzz_restart: $(BUILD)/tests/fuzz/fuzz_restart.o $(BUILD)/libmbsim.a
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer $(LDFLAGS) $< $(BUILD)/libmbsim.a $(LDLIBS_ALL) -o $@

$(BUILD)/fuzz_deck: $(BUILD)/tests/fuzz/fuzz_deck.o $(BUILD)/libmbsim.a
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer $(LDFLAGS) $< $(BUILD)/libmbsim.a $(LDLIBS_ALL) -o $@

bench: deps
	$(MAKE) all
	MBSIM=$(abspath $(BUILD)/mbsim-run) $(PYTHON) scripts/bench/chain

# 50 dice dropped into a box (scripts/bench/dice), mbsim-run against MuJoCo and Siconos when
# their Debian packages install (scripts/install-deps --bench; a peer that does not install is
# skipped with a line saying so); not part of `make test`
bench-dice: deps
	bash scripts/install-deps --bench || echo "bench-dice: MuJoCo/Siconos did not install; skipped"
	$(MAKE) all
	MBSIM=$(abspath $(BUILD)/mbsim-run) $(PYTHON) scripts/bench/dice

# time to accuracy on the chain of 1 m links against Simbody and MuJoCo (scripts/bench/peers;
# installs libsimbody-dev and libmujoco-dev with scripts/install-deps --bench); not part of
# `make test`. The README's whole table, N = 10, 50, 200, 1000 at 1e-3 and 1e-6, in one run
# (about half an hour); SIZES=10,50 for some of its rows
SIZES ?=
bench-peers: deps
	bash scripts/install-deps --bench || echo "bench-peers: Simbody/MuJoCo did not install"
	$(MAKE) all
	MBSIM=$(abspath $(BUILD)/mbsim-run) $(PYTHON) scripts/bench/peers $(if $(SIZES),--sizes $(SIZES))

# PYTHONDIR: where Debian's python3 finds packages under PREFIX (/usr/local/lib/python3/dist-packages)
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/mbsim
	install -m 755 $(BUILD)/mbsim-run $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libmbsim.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libmbsim.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/mbsim/*.h $(DESTDIR)$(PREFIX)/include/mbsim/
	install -d $(DESTDIR)$(PYTHONDIR)/mbsim $(DESTDIR)$(PREFIX)/share/mbsim-run/python/mbsim
	install -m 644 python/mbsim/*.py $(DESTDIR)$(PYTHONDIR)/mbsim/
	install -m 644 python/mbsim/*.py $(DESTDIR)$(PREFIX)/share/mbsim-run/python/mbsim/
	install -m 644 scripts/mbsim.py $(DESTDIR)$(PREFIX)/share/mbsim-run/python/
	install -m 755 scripts/mbsim-plot scripts/mbsim-export scripts/mbsim-compare \
	  scripts/mbsim-sweep $(DESTDIR)$(PREFIX)/bin/

# the modules depend on each other only downstream (util <- deck; util <- model, elements <-
# solver <- output <- run <- cli; src/cli includes public headers only): nm of the built objects (no kernel object needs a symbol of the
# deck reader or of a module above it) and their #include lines; only src/deck includes
# yaml.h, only src/output hdf5.h, only the linear solver umfpack.h and klu.h, only the
# redundancy check SuiteSparseQR_C.h (scripts/check-layering has the tables;
# tests/integration/test_layering.py shows that it fails on forbidden edges)
check-layering: $(LIB_OBJ) $(CLI_OBJ)
	$(PYTHON) scripts/check-layering --obj $(BUILD)/src --src src --include include/mbsim

format-check:
	clang-format --dry-run --Werror $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) include/mbsim/*.h

clean:
	rm -rf build build-asan build-fuzz

# every shipped deck under its own integrator and em, midpoint, euler, genalpha with the
# baseline BASE (an mbsim-run binary, a git revision built in a temporary worktree, or a
# directory of outputs <deck>_<integrator>.h5) and with this build: every dataset bit for bit
# (TOLERANCE=T allows |a - b| <= T max(1, |b|)), and restarts of this build bit-exact; takes
# minutes, so not part of `make test`
BASE ?=
TOLERANCE ?= 0
JOBS ?= 1
check-unchanged: all
	@test -n "$(BASE)" || { echo "usage: make check-unchanged BASE=<git revision, binary or output directory>"; false; }
	$(PYTHON) scripts/check-unchanged $(BASE) --current $(BUILD)/mbsim-run \
	  --tolerance $(TOLERANCE) --jobs $(JOBS)

# CPU time per step of the chain benchmark (scripts/bench/chain), baseline BASE (binary or
# git revision) against this build, interleaved in one run, the median of the repetitions'
# ratios current/baseline: it must stay <= 1.05
bench-compare: all
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<git revision or binary>"; false; }
	$(PYTHON) scripts/bench/compare $(BASE) --current $(BUILD)/mbsim-run

.PHONY: check-unchanged bench-compare

# the pictures of the how-to guides (docs/howto/img/*.png), from their decks in decks/howto/
.PHONY: howto-figures
howto-figures: deps
	$(MAKE) all
	MBSIM=$(abspath $(BUILD)/mbsim-run) $(PYTHON) scripts/howto-figures
