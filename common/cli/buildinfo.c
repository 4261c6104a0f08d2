/* buildinfo.c — version, compiler, flags and the BLAS found at run time (see buildinfo.h).
 *
 * ATTNLAB_HAVE_DLSYM (1 by default, 0 for WebAssembly, where dlsym aborts) says whether
 * the dynamic linker can be asked which library supplies the BLAS. Without it the
 * program is linked statically, so the BLAS is the one the build named (ATTNLAB_BLAS),
 * no library file is reported, threads cannot be set and the kernel is "unknown". */
#define _GNU_SOURCE /* dladdr and Dl_info are GNU extensions of <dlfcn.h> */
#include "buildinfo.h"

#ifndef ATTNLAB_HAVE_DLSYM
#if defined(__EMSCRIPTEN__)
#define ATTNLAB_HAVE_DLSYM 0
#else
#define ATTNLAB_HAVE_DLSYM 1
#endif
#endif

#if ATTNLAB_HAVE_DLSYM
#include <dlfcn.h>
#endif
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h> /* _NSGetExecutablePath */
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "unknown"
#endif
#ifndef ATTNLAB_CFLAGS
#define ATTNLAB_CFLAGS "unknown"
#endif
/* `git describe --always --dirty` of the source tree at build time (the Makefile passes
 * it); "unknown" for a build outside a git checkout or without the Makefile */
#ifndef ATTNLAB_COMMIT
#define ATTNLAB_COMMIT "unknown"
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

const char *buildinfo_commit(char *buf, size_t n, const char **modified)
{
    static const char dirty[] = "-dirty";
    const char *c = ATTNLAB_COMMIT;
    const size_t len = strlen(c), dl = sizeof dirty - 1;
    const int is_dirty = len > dl && strcmp(c + len - dl, dirty) == 0;
    *modified = strcmp(c, "unknown") == 0 ? "unknown" : is_dirty ? "yes" : "no";
    snprintf(buf, n, "%.*s", (int)(is_dirty ? len - dl : len), c);
    return buf;
}

#ifndef ATTNLAB_BLAS
#define ATTNLAB_BLAS "unknown"
#endif

/* The builds on GSL's CBLAS link the project's own cblas_dgemm (common/core/gemm_cblas.c:
 * GSL's order of operations, so GSL's bits, faster) before gslcblas, which supplies the
 * other routines. */
#define BLAS_GSL_OWN_DGEMM "GSL gslcblas (its dgemm the project's, common/core/gemm.c)"

#if !ATTNLAB_HAVE_DLSYM
/* Without a dynamic linker to ask: the BLAS the build linked, and nothing to set. */
const char *buildinfo_blas(char *path, size_t n)
{
    if (n)
        path[0] = '\0';
    if (strcmp(ATTNLAB_BLAS, "gsl") == 0)
        return BLAS_GSL_OWN_DGEMM;
    if (strcmp(ATTNLAB_BLAS, "openblas") == 0)
        return "OpenBLAS";
    return ATTNLAB_BLAS;
}

int buildinfo_set_threads(size_t threads)
{
    (void)threads;
    return -1;
}

const char *buildinfo_blas_core(void) { return "unknown"; }
#else
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
    if (strcmp(ATTNLAB_BLAS, "gsl") == 0 && !strstr(info.dli_fname, "gslcblas"))
        return BLAS_GSL_OWN_DGEMM; /* defined in the program itself */
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
#endif /* ATTNLAB_HAVE_DLSYM */

void buildinfo_write_tsv(FILE *f)
{
    char path[1024];
    const char *blas = buildinfo_blas(path, sizeof path);
    char commit[128];
    const char *modified;
    fprintf(f, "version\t%s\n", buildinfo_version());
    fprintf(f, "commit\t%s\n", buildinfo_commit(commit, sizeof commit, &modified));
    fprintf(f, "modified\t%s\n", modified);
    fprintf(f, "compiler\t%s\n", buildinfo_compiler());
    fprintf(f, "cflags\t%s\n", buildinfo_cflags());
    fprintf(f, "blas\t%s\n", blas);
    fprintf(f, "blas_library\t%s\n", path);
    fprintf(f, "blas_core\t%s\n", buildinfo_blas_core());
}

#if ATTNLAB_HAVE_DLSYM
const char *buildinfo_blas_core(void)
{
    /* looked up at run time, like the thread count: GSL's CBLAS has no kernels to name */
    void *sym = dlsym(RTLD_DEFAULT, "openblas_get_corename");
    if (!sym)
        return "unknown";
    char *(*corename)(void);
    memcpy(&corename, &sym, sizeof corename);
    const char *name = corename();
    return name && *name ? name : "unknown";
}
#endif /* ATTNLAB_HAVE_DLSYM */

static const char *saved_argv0;

void buildinfo_set_argv0(const char *argv0)
{
    saved_argv0 = argv0;
}

/* realpath of candidate into out when it names an existing file that fits; else -1. */
static int resolve(const char *candidate, char *out, size_t n)
{
    char buf[PATH_MAX];
    if (!realpath(candidate, buf) || access(buf, X_OK) != 0 || strlen(buf) >= n)
        return -1;
    memcpy(out, buf, strlen(buf) + 1);
    return 0;
}

int buildinfo_self_path(char *out, size_t n)
{
#if defined(__APPLE__)
    char buf[PATH_MAX];
    uint32_t size = sizeof buf;
    if (_NSGetExecutablePath(buf, &size) == 0 && resolve(buf, out, n) == 0)
        return 0;
#elif defined(__linux__)
    /* Linux only; everything below works without /proc too */
    char buf[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (k > 0) {
        buf[k] = '\0';
        if (resolve(buf, out, n) == 0)
            return 0;
    }
#endif
    return buildinfo_path_from_argv0(saved_argv0, out, n);
}

int buildinfo_path_from_argv0(const char *a0, char *out, size_t n)
{
    char buf[PATH_MAX];
    if (!a0 || !*a0)
        return -1;
    if (strchr(a0, '/')) /* a path, absolute or relative to the working directory */
        return resolve(a0, out, n);
    /* a bare name: the first match along PATH, as the shell found it */
    const char *path = getenv("PATH");
    if (!path)
        return -1;
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* an empty entry means the working directory, as in the shell */
        int w = len ? snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, a0)
                    : snprintf(buf, sizeof buf, "./%s", a0);
        if (w > 0 && (size_t)w < sizeof buf && resolve(buf, out, n) == 0)
            return 0;
        if (!end)
            return -1;
        p = end;
    }
}
