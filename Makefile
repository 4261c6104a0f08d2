# attnlab — build, test, demo, bench, install.
#
# Settings (override on the command line, e.g. `make CC=clang SANITIZE=1 check`):
#   CC        C compiler (C11): gcc or clang, on Linux, WSL or macOS
#   OPT       optimisation flags; never -Ofast/-ffast-math (they break IEEE -INFINITY
#             masks and the reproducibility of results)
#   CPPFLAGS, LDFLAGS, LDLIBS   added where GNU make's conventions put them (e.g. a GSL
#             outside the default paths: LDFLAGS=-L/opt/gsl/lib CPPFLAGS=-I/opt/gsl/include)
#   SANITIZE  1 builds everything with AddressSanitizer + UndefinedBehaviorSanitizer,
#             into build/san/ so it never mixes with the normal objects
#   BUILD     where objects and programs go (default build, or build/san)
#   PREFIX    install prefix (default /usr/local); DESTDIR a staging root for packagers
#   BLAS      openblas (default when pkg-config finds it) or gsl (GSL's own gslcblas)
#   PKG_CONFIG  the pkg-config program (a cross build names its own)
#
# Every library flag comes from pkg-config. On macOS, Homebrew's OpenBLAS is keg-only
# (not linked into the default paths), so its pkg-config directory is added here.

CC         ?= cc
OPT        ?= -O2 -g
PREFIX     ?= /usr/local
DESTDIR    ?=
PKG_CONFIG ?= pkg-config
VERSION    := 0.1.0
UNAME_S    := $(shell uname -s 2>/dev/null)

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wpointer-arith -Wcast-qual -Wwrite-strings -Wundef -Wformat=2 \
            -Wvla -Wnull-dereference
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
ifeq ($(UNAME_S),Darwin)
  # POSIX mode hides dladdr, flock and friends on macOS unless this is defined too
  CSTD += -D_DARWIN_C_SOURCE
  BREW_OPENBLAS := $(shell brew --prefix openblas 2>/dev/null)
  ifneq ($(BREW_OPENBLAS),)
    export PKG_CONFIG_PATH := $(BREW_OPENBLAS)/lib/pkgconfig:$(PKG_CONFIG_PATH)
  endif
endif
# Floating point exactly as written: no compiler may fuse a*b+c into one FMA behind the
# code's back (clang does by default wherever the target has FMA, e.g. every arm64 and
# x86-64 with -march=native), so gcc and clang builds compute the same bits. Not a
# setting: it is part of what the results mean (docs/reliability.md, reproducibility).
FPFLAGS  := -ffp-contract=off

# BLAS: OpenBLAS as GSL's CBLAS when present. Debian links with --as-needed, so the
# library that supplies cblas_* must come after -lgsl, never before; GSL's pkg-config
# file names its own gslcblas, which is dropped when OpenBLAS supplies the CBLAS.
BLAS     ?= $(if $(shell $(PKG_CONFIG) --exists openblas 2>/dev/null && echo y),openblas,gsl)
ifeq ($(BLAS),openblas)
  BLAS_CFLAGS := $(shell $(PKG_CONFIG) --cflags openblas 2>/dev/null)
  BLAS_LIBS   := $(shell $(PKG_CONFIG) --libs openblas 2>/dev/null || echo -lopenblas)
else
  BLAS_CFLAGS :=
  BLAS_LIBS   := -lgslcblas
endif
GSL_CFLAGS   := $(shell $(PKG_CONFIG) --cflags gsl 2>/dev/null)
GSL_LIBS     := $(filter-out -lgslcblas,$(shell $(PKG_CONFIG) --libs gsl 2>/dev/null || echo -lgsl))
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck)
# dlsym/dladdr live in libdl on glibc before 2.34, in libc elsewhere (macOS: libSystem)
DL_LIBS      := $(if $(filter Linux,$(UNAME_S)),-ldl,)

ifeq ($(SANITIZE),1)
  BUILD    ?= build/san
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
  BUILD    ?= build
  SANFLAGS :=
endif

CFLAGS   ?= $(OPT)
ALL_CFLAGS = $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(GSL_CFLAGS) \
             $(BLAS_CFLAGS) -DATTNLAB_VERSION='"$(VERSION)"' -DATTNLAB_BLAS='"$(BLAS)"' \
             -DATTNLAB_CFLAGS='"$(strip $(FPFLAGS) $(CFLAGS) $(SANFLAGS))"' -MMD -MP
ALL_LDLIBS = $(LDLIBS) $(GSL_LIBS) $(BLAS_LIBS) -lm $(DL_LIBS)

# The source commit every build.tsv and manifest.tsv records: `git describe --always
# --dirty` where the tree is a git checkout (a "-dirty" end: files differ from the
# commit), else "unknown" (a tarball, or no git); only letters, digits and ._- kept.
# $(BUILD)/commit.txt is rewritten only when the value changes and buildinfo.o depends on
# it, so a new commit or a first edit rebuilds that one object.
COMMIT := $(or $(shell test -e .git && git describe --always --dirty 2>/dev/null | \
                 tr -cd 'A-Za-z0-9._-'),unknown)

# Sources: every .c file of the code folders (common/core, the portable core; common/cli/cli,
# the command line; the three models). The program adds attnlab.c (the model registry and
# main); the tests add tests/*.c.
LIB_SRC  := $(wildcard common/core/*.c common/cli/*.c lstm/*.c rnn_attention/*.c \
                       transformer/*.c)
# common/core/gemm_cblas.c is cblas_dgemm answered by the project's own product
# (common/core/gemm.c: GSL's bits, faster): linked where GSL's gslcblas is the CBLAS, and
# left out of the OpenBLAS build, where it would hide OpenBLAS's cblas_dgemm.
ifneq ($(BLAS),gsl)
  LIB_SRC := $(filter-out common/core/gemm_cblas.c,$(LIB_SRC))
endif
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
BIN      := $(BUILD)/attnlab
TEST_BIN := $(BUILD)/attnlab-tests
# The generator of lab 08's data set, a program of its own (it needs no library).
LABDATA  := $(BUILD)/labdata-dates
TRANSLATE_GEN  := $(BUILD)/labdata-translate
TRANSLATE_DATA := $(BUILD)/data/translate.tsv
# The writer of the printable worksheets, and the handouts it reads (English, Chinese).
WORKSHEET := $(BUILD)/worksheet
HANDOUTS  := $(wildcard docs/labs/[0-9][0-9]-*.md docs/zh/labs/[0-9][0-9]-*.md)

.PHONY: FORCE all labdata translate-data worksheets check check-keys check-fast check-compilers check-pytorch demo published bench fuzz valgrind clean install \
        uninstall deps

# Build the attnlab program.
all: $(BIN)

$(BIN): $(BUILD)/attnlab.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# The registry without main(), for the test program.
$(BUILD)/registry.o: attnlab.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DATTNLAB_NO_MAIN -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The commit the build is made from, kept so that buildinfo.o is rebuilt when it changes.
$(BUILD)/commit.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(COMMIT)' | cmp -s - $@ || echo '$(COMMIT)' > $@
$(BUILD)/common/cli/buildinfo.o: $(BUILD)/commit.txt
$(BUILD)/common/cli/buildinfo.o: ALL_CFLAGS += -DATTNLAB_COMMIT='"$(COMMIT)"'

# A prerequisite that is never up to date: the rule that names it always runs.
FORCE:

# The list of Check suites, found in the test files, so a new test file needs no edit here.
$(BUILD)/tests/suites.h: $(TEST_SRC)
	@mkdir -p $(dir $@)
	@grep -ho 'Suite \*make_[a-z0-9_]*_suite(void)' $(TEST_SRC) | sort -u | \
	  sed 's/Suite \*\(make_[a-z0-9_]*_suite\)(void)/SUITE(\1)/' > $@.tmp && mv $@.tmp $@
$(TEST_OBJ): $(BUILD)/tests/suites.h
$(TEST_OBJ): ALL_CFLAGS += $(CHECK_CFLAGS) -I$(BUILD)/tests

# The tests also run the data generator and the worksheets' writer beside the program
# (tests/test_translate.c, tests/test_worksheets.c).
$(TEST_BIN): $(TEST_OBJ) $(BUILD)/registry.o $(LIB_OBJ) | $(TRANSLATE_GEN) $(WORKSHEET)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(ALL_LDLIBS)

# Build the generator of docs/labs/data/dates.tsv.
$(LABDATA): docs/labs/data/dates.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(SANFLAGS) -o $@ $<

# Build the generator of the toy translation data set (docs/labs/data/translate.c).
$(TRANSLATE_GEN): docs/labs/data/translate.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(SANFLAGS) -o $@ $<

# Write the toy translation data set (about 8 MB, so written here rather than kept in the
# repository): train on it with --task file:$(TRANSLATE_DATA).
translate-data: $(TRANSLATE_DATA)
$(TRANSLATE_DATA): $(TRANSLATE_GEN)
	@mkdir -p $(dir $@)
	$(TRANSLATE_GEN) > $@.tmp
	mv $@.tmp $@

# Lab 09 trains on build/data/translate.tsv whatever BUILD is, and the tests run its
# commands: a build elsewhere (build/san) writes that file too, with its own generator
# (the bytes are the same).
LAB_TRANSLATE := build/data/translate.tsv
ifneq ($(TRANSLATE_DATA),$(LAB_TRANSLATE))
$(LAB_TRANSLATE): $(TRANSLATE_GEN)
	@mkdir -p $(dir $@)
	$(TRANSLATE_GEN) > $@.tmp
	mv $@.tmp $@
endif

# Build the writer of the printable worksheets (docs/labs/worksheets/worksheet*.c).
$(WORKSHEET): docs/labs/worksheets/worksheet.c docs/labs/worksheets/worksheet_write.c \
              docs/labs/worksheets/worksheet.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.c,$^)

# Write the printable worksheets again, one A4 page per lab and language, from the lab
# handouts (their commands and questions), worksheets/sheet.txt (the results tables) and
# the labs README (what the browser page can do): docs/labs/worksheets/NN-NAME.md and
# .html, and the same in docs/zh/labs/worksheets/. tests/test_worksheets.c fails when a
# committed sheet is not what this writes.
worksheets: $(WORKSHEET)
	@for h in $(HANDOUTS); do \
	  out=$${h%/*}/worksheets/$${h##*/}; out=$${out%.md}; \
	  $(WORKSHEET) md $$h > $$out.md.tmp && mv $$out.md.tmp $$out.md && \
	  $(WORKSHEET) html $$h > $$out.html.tmp && mv $$out.html.tmp $$out.html || exit 1; \
	  echo "$$out.md, $$out.html"; \
	done

# Write docs/labs/data/dates.tsv again with its generator (docs/labs/data/dates.c).
labdata: $(LABDATA)
	$(LABDATA) > docs/labs/data/dates.tsv.tmp
	mv docs/labs/data/dates.tsv.tmp docs/labs/data/dates.tsv

# Install what is missing (apt-get), build, and run every test (CK_FORK on); then check
# that the lab's data set is what its generator writes. The program is also built on
# GSL's CBLAS (make BLAS=gsl, in $(BUILD)/gslblas), whose golden checkpoints the tests
# compare too (tests/test_models.c: the bits the browser page computes).
check: deps
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN) $(LABDATA) $(LAB_TRANSLATE)
	@$(MAKE) --no-print-directory BLAS=gsl BUILD=$(BUILD)/gslblas $(BUILD)/gslblas/attnlab
	ATTNLAB=$(BIN) ATTNLAB_GSL=$(BUILD)/gslblas/attnlab $(TEST_BIN)
	@$(LABDATA) | cmp -s - docs/labs/data/dates.tsv || { echo "docs/labs/data/dates.tsv" \
	  "is not what docs/labs/data/dates.c writes: run make labdata" >&2; exit 1; }

# Run every lab handout at full length (seed 1, OpenBLAS kernel Haswell) and check that
# each number its key quotes lies in the band of docs/labs/keys/NN-*.bands.tsv (tests/test_keys.c;
# about ten minutes). `make check` does the same for the short runs only. tests/labkeys.sh
# measures the bands over seeds and kernels.
check-keys: deps
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN) $(LAB_TRANSLATE)
	ATTNLAB_KEYS_ALL=1 CK_RUN_SUITE=keys ATTNLAB=$(BIN) $(TEST_BIN)

# Run the fast subset only (skips the cases tagged slow).
check-fast: $(BIN) $(TEST_BIN)
	CK_EXCLUDE_TAGS=slow ATTNLAB=$(BIN) $(TEST_BIN)

# Build with clang -O2 -march=native (its own build/clang), check that its 60-step
# checkpoints of every model and variant are the fixture's, which the default gcc build
# wrote, bit for bit (the golden test: -ffp-contract=off makes the compiler irrelevant),
# then run that build's fast tests.
CLANG_BUILD := build/clang
check-compilers: deps
	@sh .ci/deps.sh fuzz
	@$(MAKE) --no-print-directory CC=clang OPT="-O2 -march=native" BUILD=$(CLANG_BUILD) \
	  $(CLANG_BUILD)/attnlab $(CLANG_BUILD)/attnlab-tests
	CK_RUN_SUITE=models CK_RUN_CASE=golden ATTNLAB=$(CLANG_BUILD)/attnlab $(CLANG_BUILD)/attnlab-tests
	CK_EXCLUDE_TAGS=slow ATTNLAB=$(CLANG_BUILD)/attnlab $(CLANG_BUILD)/attnlab-tests

# ---- the PyTorch twin (tests/pytorch/) --------------------------------------------------
# twin-grads loads a checkpoint and writes attnlab's loss, gradients and greedy tokens on
# one batch; check.py trains a small model of every kind and variant with attnlab and
# holds the twin (tests/pytorch/twin.py, float64) to them. Needs Debian's python3-torch,
# which runs with /usr/bin/python3 (PYTHON overrides it).
PYTHON   ?= /usr/bin/python3
TWIN_BIN := $(BUILD)/tests/pytorch/twin-grads

$(TWIN_BIN): $(BUILD)/tests/pytorch/grads.o $(BUILD)/registry.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# Compare every model and variant with its PyTorch twin: loss and gradients to 1e-9, the
# same greedy tokens (skipped, with one line, when python3-torch is not installed).
check-pytorch:
	@if ! $(PYTHON) -c 'import torch' >/dev/null 2>&1; then \
	  echo "python3-torch not installed: skipping the PyTorch comparison (apt-get install python3-torch)"; \
	else \
	  $(MAKE) --no-print-directory $(BIN) $(TWIN_BIN) && \
	  $(PYTHON) tests/pytorch/check.py --attnlab $(BIN) --grads $(TWIN_BIN); \
	fi

# Install what is missing, build, then run the quick comparison of the three models into
# results/demo/ (tables, figures, report.html; about 420 s of CPU, three and a half
# minutes on two free cores; the LSTM does not reach its target in it, as the report says).
demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	$(BIN) compare --preset quick --out results/demo
	@echo "figures:"; ls -1 results/demo/figures/*.png 2>/dev/null | sed 's/^/  /'
	@echo "open results/demo/report.html in a browser for all of them with captions"

# Make the tables and figures published under docs/figures/NAME/ again from the runs
# committed there, with this build's report (plots/published.sh, docs/figures.md).
published: deps
	@$(MAKE) --no-print-directory $(BIN)
	sh plots/published.sh $(BIN)

# Measure training and decoding speed of every model (see docs/performance.md).
bench: deps
	@$(MAKE) --no-print-directory $(BIN)
	$(BIN) bench

# Install the Debian packages the build needs, when any is missing.
deps:
	@sh .ci/deps.sh

# ---- fuzzing (clang's libFuzzer) --------------------------------------------------------
# Each harness in tests/fuzz/ feeds arbitrary bytes to one reader of untrusted input: the
# checkpoint loader (CRCs repaired), the command line of every command and args.txt, the
# token-list and TSV parsers, report's run loader (rundir_load); one more watches what
# the writing commands do to an output directory full of symbolic links (fuzz_outdir).
# `make fuzz` runs each for FUZZ_SECONDS on its corpus (tests/fuzz/corpus/NAME, plus what
# it finds, kept in build/fuzz/corpus/NAME); a crash leaves build/fuzz/crash-NAME-* and
# fails the target.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_BUILD   := build/fuzz
FUZZ_NAMES   := checkpoint args tokens rundir outdir
FUZZ_OBJ     := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/registry.o
FUZZ_CFLAGS   = $(CSTD) $(WARN) $(FPFLAGS) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(GSL_CFLAGS) \
                $(BLAS_CFLAGS) -DATTNLAB_VERSION='"$(VERSION)"' -MMD -MP

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/registry.o: attnlab.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DATTNLAB_NO_MAIN -c -o $@ $<

.SECONDARY: $(FUZZ_OBJ)
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(ALL_LDLIBS)
# headers the objects and the harnesses include (-MMD): a changed header rebuilds them
-include $(FUZZ_OBJ:.o=.d) $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%.d)

# Build the fuzzers and run each for FUZZ_SECONDS seconds (CI: a short bounded run).
fuzz: deps
	@sh .ci/deps.sh fuzz
	@$(MAKE) --no-print-directory $(BIN) $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)
	@sh tests/fuzz/run.sh $(BIN) $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)

# ---- WebAssembly (emscripten): the core and the models for the browser -----------------
# The portable core and every model compiled with emcc, with the project's warnings and
# floating-point flags, against GSL built for WebAssembly from a pinned source with GSL's
# own CBLAS (plots/web/build-gsl.sh: Debian's source package, or the GNU tarball, each
# checked by its sha256; cached in build/web/). docs/web.md says what runs where.
#   EMCC      emscripten's compiler (emcc); NODE runs what it builds (node)
#   CHROMIUM  the browser the page's test drives (/usr/bin/chromium: Debian's chromium)
#   WEB_SIMD  1 (the default) compiles GSL and the core with -msimd128 (WebAssembly
#             SIMD): the same bits as 0, and faster in Chromium (docs/performance.md,
#             docs/web.md). Each has build dirs of its own (gsl-simd, obj-simd; gsl,
#             obj); the outputs of WEB_SIMD=0 are named *-nosimd.
EMCC     ?= emcc
NODE     ?= node
CHROMIUM ?= /usr/bin/chromium
WEB_SIMD ?= 1
GSL_WEB_VERSION    := 2.7.1
GSL_WEB_DEB        := 2.7.1+dfsg-5+deb12u1
GSL_WEB_SHA256_DEB := e560d6b9c6e254e46769bbb03583c00ecafbdd51b062c55db23b3b9612868567
GSL_WEB_SHA256_GNU := dcb0fbd43048832b757ff9942691a8dd70026d5da0ff85601e52687f6deeb34b
# gnuplot for the page, from Debian's source package (plots/web/build-gnuplot.sh). Its
# upstream tarball, gnuplot-5.4.4.tar.gz, is not pinned: gnuplot publishes it on
# SourceForge, and the machines attnlab is built and tested on reach only Debian's archive
# and npm, so its sha256 could not be taken from the file itself. "-" says so, and
# build-gnuplot.sh then accepts Debian's tarball alone (GNUPLOT_TARBALL too); pin it here
# once someone with the file has checked it (docs/web.md).
GNUPLOT_WEB_VERSION         := 5.4.4
GNUPLOT_WEB_DEB             := 5.4.4+dfsg1-2
GNUPLOT_WEB_SHA256_DEB      := 53af9bba3dc5344df2a746abf8c93e014403897304a385e720c3df9e3731b593
GNUPLOT_WEB_SHA256_UPSTREAM := -
GNUPLOT_WEB := build/web/gnuplot.js
WEB_SUFFIX := $(if $(filter 1,$(WEB_SIMD)),,-nosimd)
WEB_FLAVOUR := $(if $(filter 1,$(WEB_SIMD)),-simd,)
WEB_OPT    := -O2 $(if $(filter 1,$(WEB_SIMD)),-msimd128,)
GSL_WEB    := build/web/gsl$(WEB_FLAVOUR)
WEB_OBJDIR := build/web/obj$(WEB_FLAVOUR)
# The portable core: what every front-end compiles (common/core: no processes, signals,
# file locks, dlsym, gnuplot: tests/test_layers.c), and the program's
# description of itself (common/cli/buildinfo.c, without dlsym under emscripten).
WEB_CORE_SRC := $(wildcard common/core/*.c)
# the portable files of the command line the page borrows: the build facts (without
# dlsym), and the merging of runs into a comparison's tables (architecture.md says why)
WEB_CLI_SRC := $(addprefix common/cli/,buildinfo.c rundir.c rundir_table.c rundir_text.c \
               safedir.c summary.c summary_bleu.c summary_compute.c summary_group.c \
               summary_sweep.c summary_train.c report.c report_figures.c report_labels.c)
WEB_SRC    := $(WEB_CORE_SRC) $(WEB_CLI_SRC) $(wildcard lstm/*.c rnn_attention/*.c transformer/*.c)
WEB_OBJ    := $(WEB_SRC:%.c=$(WEB_OBJDIR)/%.o) $(WEB_OBJDIR)/registry.o
WEB_CFLAGS := $(CSTD) $(WARN) $(FPFLAGS) $(WEB_OPT) -I$(GSL_WEB)/include \
              -DATTNLAB_VERSION='"$(VERSION)"' -DATTNLAB_BLAS='"gsl"' \
              -DATTNLAB_CFLAGS='"$(strip $(FPFLAGS) $(WEB_OPT))"' -MMD -MP
WEB_LIBS   := $(GSL_WEB)/lib/libgsl.a $(GSL_WEB)/lib/libgslcblas.a
# emscripten 3.1.6 (Debian 12) under node 18 or later: its loader must not use fetch(),
# and its optimiser needs acorn, which Debian keeps where only Debian's own node looks
WEB_ENV    := NODE_OPTIONS=--no-experimental-fetch \
              $(if $(wildcard /usr/share/nodejs/acorn),NODE_PATH=/usr/share/nodejs,)
# The node program of the checks: files go to the real file system, memory grows
WEB_NODE_FLAGS := -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 \
                  -sWASM_ASYNC_COMPILATION=0
WEB_CHECK  := build/web/web_check$(WEB_SUFFIX).js
# The native build on the same CBLAS, whose checkpoints the wasm build must write
GSLBLAS_BUILD := build/gslblas
# The page: the core with the page's entry point (common/web/web_page.c) as one
# JavaScript file holding its WebAssembly (SINGLE_FILE), for the browser's Workers and
# for node; plots/web/build-page.sh inlines it with the page's HTML, CSS and JavaScript
# (plots/web/) into one HTML file (docs/web.md)
space := $(empty) $(empty)
comma := ,
WEB_PAGE_EXPORTS := page_init page_error page_text page_models page_preset page_create \
                    page_train page_finish page_evaluate page_open page_config page_decode \
                    page_close page_compare page_curves page_stage page_figures
WEB_PAGE_FLAGS := -sMODULARIZE=1 -sEXPORT_NAME=AttnlabCore -sSINGLE_FILE=1 \
                  -sENVIRONMENT=web,worker,node -sALLOW_MEMORY_GROWTH=1 -sFORCE_FILESYSTEM=1 \
                  -sEXPORTED_FUNCTIONS=$(subst $(space),$(comma),$(WEB_PAGE_EXPORTS:%=_%)) \
                  -sEXPORTED_RUNTIME_METHODS=cwrap,FS,UTF8ToString
WEB_CORE_JS := build/web/attnlab_core$(WEB_SUFFIX).js
WEB_PAGE    := build/web/attnlab$(WEB_SUFFIX).html
WEB_PAGE_SRC := $(addprefix plots/web/,page.html page.css page.js page-text.js \
                page-figures.js worker.js tar.js figworker.js figures.js build-page.sh) \
                $(addprefix plots/,curves.gp accuracy.gp positions.gp distance.gp bleu.gp \
                sweep.gp budget.gp capacity.gp cost.gp attention.gp gates.gp)

.PHONY: web web-deps web-gsl web-gnuplot check-web

# Build the core and the models for WebAssembly: the checks' entry point for node, the
# page, build/web/attnlab.html (one file: open it in a browser), and gnuplot for
# WebAssembly with the figure scripts' runner (plots/web/figures.js).
web: $(WEB_CHECK) $(WEB_PAGE) web-gnuplot

# Install emscripten and node when missing (apt-get, Homebrew).
web-deps:
	@sh .ci/deps.sh web

# GSL for WebAssembly from its pinned source (does nothing when built with these pins).
web-gsl: web-deps
	@$(WEB_ENV) sh plots/web/build-gsl.sh $(GSL_WEB) $(GSL_WEB_VERSION) $(GSL_WEB_DEB) \
	  $(GSL_WEB_SHA256_DEB) $(GSL_WEB_SHA256_GNU) "$(strip $(WEB_OPT) $(FPFLAGS))"

# gnuplot for WebAssembly from its pinned source, one file a page runs in a Web Worker
# through plots/web/figures.js (does nothing when built with these pins).
web-gnuplot: web-deps
	@$(WEB_ENV) sh plots/web/build-gnuplot.sh $(GNUPLOT_WEB) $(GNUPLOT_WEB_VERSION) \
	  $(GNUPLOT_WEB_DEB) $(GNUPLOT_WEB_SHA256_DEB) $(GNUPLOT_WEB_SHA256_UPSTREAM)

$(WEB_OBJDIR)/%.o: %.c | web-gsl
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -c -o $@ $<

$(WEB_OBJDIR)/registry.o: attnlab.c | web-gsl
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -DATTNLAB_NO_MAIN -c -o $@ $<

# The checks' entry point (common/web/web_check.c) for node.
$(WEB_CHECK): $(WEB_OBJDIR)/common/web/web_check.o $(WEB_OBJ)
	$(WEB_ENV) $(EMCC) $(WEB_CFLAGS) $(WEB_NODE_FLAGS) -o $@ $^ $(WEB_LIBS)

# The page's entry point (common/web/web_page.c, web_run.c, web_settings.c, web_decode.c,
# web_compare.c) as one JavaScript module (AttnlabCore).
WEB_PAGE_OBJ := $(addprefix $(WEB_OBJDIR)/common/web/,web_page.o web_run.o web_settings.o \
                web_decode.o web_compare.o)
$(WEB_CORE_JS): $(WEB_PAGE_OBJ) $(WEB_OBJ)
	$(WEB_ENV) $(EMCC) $(WEB_CFLAGS) $(WEB_PAGE_FLAGS) -o $@ $^ $(WEB_LIBS)

# The page: one HTML file with its CSS, its JavaScript and the module inlined.
$(WEB_PAGE): $(WEB_CORE_JS) $(WEB_PAGE_SRC) $(wildcard $(GNUPLOT_WEB)) | web-gnuplot
	sh plots/web/build-page.sh $(WEB_CORE_JS) $(GNUPLOT_WEB) plots/web $@

# The same entry point built natively (speeds side by side: docs/web.md).
$(BUILD)/web_check: $(BUILD)/common/web/web_check.o $(BUILD)/registry.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# Build the WebAssembly checks and run them under node: every model's gradient check,
# then 60-step trainings, by web_check and through the page's entry point in chunks
# (tests/web/page.js), whose checkpoints must be those of the native build on GSL's
# CBLAS (make BLAS=gsl, in build/gslblas) byte for byte (tests/web/check.sh); then every
# figure script drawn by gnuplot for WebAssembly against native gnuplot on a smoke
# comparison (tests/web/figures.sh); then every figure the page draws, from the
# comparison directory page_compare makes of a run of each model (tests/web/page.js
# figures); then the page in headless Chromium (tests/web/browser.js). Skipped, with one line, where emcc or node is missing, the
# browser test alone where Chromium or playwright-core is (sh .ci/deps.sh web installs
# them).
check-web:
	@if ! command -v $(EMCC) >/dev/null 2>&1 || ! command -v $(NODE) >/dev/null 2>&1; then \
	  echo "emscripten or node not installed: skipping the WebAssembly checks (sh .ci/deps.sh web installs them)"; \
	else \
	  $(MAKE) --no-print-directory $(WEB_CHECK) $(WEB_PAGE) && \
	  $(MAKE) --no-print-directory BLAS=gsl BUILD=$(GSLBLAS_BUILD) $(GSLBLAS_BUILD)/attnlab && \
	  sh tests/web/check.sh "$(NODE) $(WEB_CHECK)" $(GSLBLAS_BUILD)/attnlab build/web/check \
	    "env $(WEB_ENV) $(NODE) tests/web/page.js $(WEB_CORE_JS)" && \
	  $(MAKE) --no-print-directory web-gnuplot $(BUILD)/attnlab && \
	  $(WEB_ENV) sh tests/web/figures.sh $(NODE) $(GNUPLOT_WEB) $(BUILD)/attnlab build/web/figures && \
	  $(MAKE) --no-print-directory $(WEB_PAGE) && \
	  $(WEB_ENV) $(NODE) tests/web/page.js $(WEB_CORE_JS) figures $(GNUPLOT_WEB) build/web/page-figures && \
	  if [ ! -x "$(CHROMIUM)" ] || [ ! -d tests/web/node_modules/playwright-core ]; then \
	    echo "chromium ($(CHROMIUM)) or playwright-core (tests/web/node_modules) not installed: skipping the page's browser test (sh .ci/deps.sh web installs them)"; \
	  else \
	    $(NODE) tests/web/browser.js $(WEB_PAGE) $(CHROMIUM) $(BUILD)/attnlab; \
	  fi; \
	fi

-include $(WEB_OBJ:.o=.d) $(WEB_OBJDIR)/common/web/web_check.d $(BUILD)/common/web/web_check.d \
         $(WEB_PAGE_OBJ:.o=.d)

# Run the fast tests under valgrind: no leak, no invalid access (CK_FORK=no so valgrind
# sees every test in one process).
valgrind: deps
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN)
	CK_FORK=no CK_EXCLUDE_TAGS="slow noval" ATTNLAB=$(BIN) valgrind --quiet --error-exitcode=1 \
	  --leak-check=full --errors-for-leak-kinds=definite,indirect $(TEST_BIN)

# Remove everything the build wrote.
clean:
	rm -rf build

# Install the program, its manual page and the figure scripts under $(DESTDIR)$(PREFIX).
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/attnlab/plots
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/attnlab
	install -m 644 attnlab.1 $(DESTDIR)$(PREFIX)/share/man/man1/attnlab.1
	install -m 644 plots/*.gp $(DESTDIR)$(PREFIX)/share/attnlab/plots/

# Remove what install wrote.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/attnlab $(DESTDIR)$(PREFIX)/share/man/man1/attnlab.1
	rm -rf $(DESTDIR)$(PREFIX)/share/attnlab

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/attnlab.d $(BUILD)/registry.d \
         $(BUILD)/tests/pytorch/grads.d
