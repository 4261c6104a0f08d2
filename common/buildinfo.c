/* buildinfo.c — version, compiler, flags and the BLAS found at run time (see buildinfo.h). */
#define _GNU_SOURCE /* dladdr and Dl_info are GNU extensions of <dlfcn.h> */
#include "buildinfo.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "unknown"
#endif
#ifndef ATTNLAB_CFLAGS
#define ATTNLAB_CFLAGS "unknown"
#endif

const char *buildinfo_version(void) { return ATTNLAB_VERSION; }

const char *buildinfo_compiler(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown C compiler";
#endif
}

const char *buildinfo_cflags(void) { return ATTNLAB_CFLAGS; }

const char *buildinfo_blas(char *path, size_t n)
{
    if (n)
        path[0] = '\0';
    /* which loaded object defines the symbol the GSL BLAS wrappers call? */
    void *sym = dlsym(RTLD_DEFAULT, "cblas_dgemm");
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname)
        return "unknown";
    snprintf(path, n, "%s", info.dli_fname);
    if (strstr(info.dli_fname, "openblas"))
        return "OpenBLAS";
    if (strstr(info.dli_fname, "gslcblas"))
        return "GSL gslcblas (reference CBLAS, slow)";
    if (strstr(info.dli_fname, "blis"))
        return "BLIS";
    if (strstr(info.dli_fname, "mkl"))
        return "Intel MKL";
    const char *base = strrchr(info.dli_fname, '/');
    return base ? base + 1 : info.dli_fname;
}

int buildinfo_set_threads(size_t threads)
{
    /* looked up at run time, so the program also builds and runs against GSL's CBLAS */
    void *sym = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (!sym)
        return -1;
    void (*set)(int);
    memcpy(&set, &sym, sizeof set); /* object pointer to function pointer, as POSIX allows */
    set((int)threads);
    return 0;
}

void buildinfo_write_tsv(FILE *f)
{
    char path[1024];
    const char *blas = buildinfo_blas(path, sizeof path);
    fprintf(f, "version\t%s\n", buildinfo_version());
    fprintf(f, "compiler\t%s\n", buildinfo_compiler());
    fprintf(f, "cflags\t%s\n", buildinfo_cflags());
    fprintf(f, "blas\t%s\n", blas);
    fprintf(f, "blas_library\t%s\n", path);
}
