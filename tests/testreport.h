/* testreport.h — what the report and figure tests share (prefix: ru_): run directories
 * made from tests/fixtures/run/ with one value changed, and the program run as a user
 * would run it, in a child process, with what it printed kept.
 *
 * tests/fixtures/run/ is a run directory written by `attnlab train` (the smoke preset:
 * lstm, copy, seed 1, 40 steps), trimmed to the lengths 2 to 8. */
#ifndef ATTNLAB_TESTREPORT_H
#define ATTNLAB_TESTREPORT_H

#include <stddef.h>
#include <sys/resource.h>

enum { RU_PATH = 4096 };

/* A folder that does not exist: as ATTNLAB_PLOTS, report draws no figure (and says so). */
#define RU_NO_PLOTS "/nonexistent/attnlab-plots"

/* snprintf that fails the test rather than cut a path short. */
void ru_fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));

/* The source tree: $ATTNLAB_SRC, else the current directory. */
const char *ru_src_root(void);

/* A whole file (up to 1 MiB, NUL-terminated; free it), or NULL when it cannot be read;
 * *len (when not NULL) is its length. */
char *ru_slurp(const char *path, size_t *len);

/* Writes len bytes of text as the file path (the test fails when it cannot). */
void ru_spit(const char *path, const char *text, size_t len);

/* The text file dir/name (free it); the test fails when it cannot be read. */
char *ru_read(const char *dir, const char *name);

/* Writes text into dir/name. */
void ru_put(const char *dir, const char *name, const char *text);

/* mkdir -p dir (without a shell: any name); rm -rf dir. */
void ru_mkdir_p(const char *dir);
void ru_remove_tree(const char *dir);

/* A fresh directory /tmp/attnlab-report-XXXXXX, written into dir (n bytes). */
void ru_fresh_dir(char *dir, size_t n);

/* The number of entries of dir (without . and ..), -1 when it cannot be read. */
long ru_count_entries(const char *dir);

/* One change to one file of a run. */
typedef enum {
    RU_SET, /* field := value: in row `row` (from 1) of a table, or on the line of key
               field of a key/value file (row 0) */
    RU_DUP, /* a second copy of row `row` at the end */
    RU_CUT, /* every row removed, the header kept */
    RU_ADD, /* the line `value` added at the end */
    RU_DEL, /* the file removed */
} ru_op;

typedef struct ru_edit {
    const char *file; /* config.tsv, build.tsv, train_log.tsv, eval.tsv, ... */
    ru_op op;
    const char *field;
    size_t row;
    const char *value;
} ru_edit;

/* Makes dir (and its parents) a copy of the fixture run with the ne edits applied. */
void ru_make_run(const char *dir, const ru_edit *edits, size_t ne);

/* The same as base/runs/name, with one edit (or none when e is NULL). */
void ru_make_run1(const char *base, const char *name, const ru_edit *e);

/* How the program ended and what it printed. */
typedef struct ru_result {
    int status; /* exit status, or -1 for a signal */
    char *out, *err;
} ru_result;

/* Runs the program ($ATTNLAB) with args (NULL-terminated, without argv[0]). plots: NULL
 * leaves ATTNLAB_PLOTS as it is, else sets it. fsize > 0 limits the size of every file
 * the program (and gnuplot) writes, SIGXFSZ ignored: a write beyond it fails as on a
 * full disk. */
void ru_run(ru_result *r, const char *const *args, const char *plots, rlim_t fsize);
void ru_result_free(ru_result *r);

/* The line of text that contains what, copied into buf ("" when none). */
const char *ru_line_with(const char *text, const char *what, char *buf, size_t n);

/* How many times what occurs in text. */
size_t ru_count_lines_with(const char *text, const char *what);

/* A whole file of any size (NUL-terminated; free it), or NULL when it cannot be read;
 * *len (when not NULL) is its length. For pages, which hold their figures. */
char *ru_slurp_all(const char *path, size_t *len);

/* The bytes of the base64 text at the start of s (up to the first character that is
 * neither of its alphabet nor '='); NULL when it is not whole base64. Free it. */
unsigned char *ru_base64_decode(const char *s, size_t *len);

/* Puts first on PATH a stand-in fc-list in dir/bin that prints family (nothing when ""):
 * whether a Chinese font is installed is the machine's business, and the SVG holds the
 * labels as text whatever font draws them. */
void ru_fake_fc_list(const char *dir, const char *family);

/* Is gnuplot on the PATH? */
int ru_have_gnuplot(void);

#endif
