/* buildinfo.h — what this binary is and what it runs on (prefix: buildinfo_).
 *
 * The BLAS that actually computes the products is found at run time, not assumed from
 * the build: the dynamic linker is asked which loaded library supplies cblas_dgemm. That
 * is the only honest answer, because a linker that drops an unused library (Debian's
 * --as-needed) can silently leave GSL's slow reference CBLAS in charge.
 */
#ifndef ATTNLAB_BUILDINFO_H
#define ATTNLAB_BUILDINFO_H

#include <stddef.h>
#include <stdio.h>

/* The program version, e.g. "0.1.0". */
const char *buildinfo_version(void);
/* The compiler and its version, e.g. "gcc 12.2.0". */
const char *buildinfo_compiler(void);
/* The compiler flags of the build. */
const char *buildinfo_cflags(void);
/* The source commit the program was built from (git describe --always, e.g. "afd8161" or
 * "v0.1.0-3-gafd8161") into buf, "unknown" when the build had no git checkout; *modified
 * is "yes" when the tree held changes not committed then, "no", or "unknown". Returns buf. */
const char *buildinfo_commit(char *buf, size_t n, const char **modified);
/* A short name of the BLAS in use ("OpenBLAS", "GSL gslcblas" or the library's file
 * name) and, in path, the file that supplies cblas_dgemm (empty when unknown). */
const char *buildinfo_blas(char *path, size_t n);
/* Sets the number of BLAS threads when the BLAS can (OpenBLAS); returns 0, or -1 when the
 * BLAS in use has no threads to set (GSL's CBLAS is single-threaded anyway). */
int buildinfo_set_threads(size_t threads);
/* The processor kernel the BLAS runs (OpenBLAS's openblas_get_corename(), e.g. "Haswell",
 * "SkylakeX", "NeoverseN1"), or "unknown". Results agree to the bit only between runs on
 * the same kernel: OPENBLAS_CORETYPE=NAME forces one (docs/reliability.md). */
const char *buildinfo_blas_core(void);
/* Writes "key<TAB>value" lines: version, commit, modified, compiler, cflags, blas,
 * blas_library, blas_core. */
void buildinfo_write_tsv(FILE *f);

/* Remembers argv[0], from which buildinfo_self_path finds the program where the system
 * offers no direct way. Call once, first thing in main. */
void buildinfo_set_argv0(const char *argv0);
/* The absolute path of the running program into out (n bytes): from the system where it
 * says (macOS: _NSGetExecutablePath; Linux: /proc/self/exe), else argv[0] made absolute
 * (a name with a '/' against the working directory, a bare name searched in PATH), each
 * resolved with realpath. Returns 0, or -1 when no way gives an existing file that fits. */
int buildinfo_self_path(char *out, size_t n);
/* The fallback of buildinfo_self_path on its own (for systems without either, and for
 * tests): argv0 made absolute into out. Returns 0, or -1. */
int buildinfo_path_from_argv0(const char *argv0, char *out, size_t n);

#endif
