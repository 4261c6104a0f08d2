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
/* A short name of the BLAS in use ("OpenBLAS", "GSL gslcblas" or the library's file
 * name) and, in path, the file that supplies cblas_dgemm (empty when unknown). */
const char *buildinfo_blas(char *path, size_t n);
/* Sets the number of BLAS threads when the BLAS can (OpenBLAS); returns 0, or -1 when the
 * BLAS in use has no threads to set (GSL's CBLAS is single-threaded anyway). */
int buildinfo_set_threads(size_t threads);
/* Writes "key<TAB>value" lines: version, compiler, cflags, blas, blas_library. */
void buildinfo_write_tsv(FILE *f);

#endif
