/* test_layers.c — the layering of the sources: the portable core (common/core) includes
 * no front-end and does nothing only a program may do, and no source file grows past
 * the length a reader can hold.
 *
 * Design. Each rule is a function over one file's text that returns a line naming the
 * first breach (empty when none), so the same function runs over the tree and, in
 * rules_catch_what_they_forbid, over texts made to break it: a rule that cannot fire
 * fails there. Comments are blanked before a rule reads the code (a comment may name
 * fork or gnuplot), string literals too, except for the word gnuplot, which a core that
 * ran it would have to spell in a string. The tests run from the top of the tree. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testhandout.h"
#include "testutil.h"

/* The longest a source file of the code folders may be, in lines. */
#define LAYERS_MAX_LINES 600
/* Room for the files of the code folders. */
#define LAYERS_MAX_FILES 256

/* Calls the core must not make: processes, signals, file locks, the dynamic linker. */
static const char *const banned_calls[] = {
    "fork",   "vfork",   "execl",       "execlp",       "execle",  "execv",    "execvp",
    "execve", "execvpe", "posix_spawn", "posix_spawnp", "popen",   "pclose",   "system",
    "wait",   "waitpid", "kill",        "signal",       "sigaction", "raise",  "alarm",
    "setitimer", "flock", "lockf",      "dlopen",       "dlsym",   "dladdr",   NULL};
/* Words the core must not name: fcntl's locks, and gnuplot. */
static const char *const banned_words[] = {"F_SETLK", "F_SETLKW", "F_GETLK", "F_OFD_SETLK",
                                           "F_OFD_SETLKW", "F_OFD_GETLK", "gnuplot", NULL};
/* System headers that exist only for what the core must not do. */
static const char *const banned_headers[] = {"dlfcn.h", "spawn.h", "sys/wait.h",
                                             "sys/file.h", NULL};

/* Blanks comments (and string and character literals when strings is set) in s, keeping
 * its newlines, so line numbers stay those of the file. */
static void blank_comments(char *s, int strings)
{
    for (char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n')
                    *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++)
                *p = ' ';
            p--;
        } else if (*p == '"' || *p == '\'') {
            const char q = *p;
            for (p++; *p && *p != q && *p != '\n'; p++) {
                const int esc = *p == '\\' && p[1];
                if (strings)
                    *p = ' ';
                if (esc) {
                    p++;
                    if (strings)
                        *p = ' ';
                }
            }
            if (!*p)
                p--;
        }
    }
}

/* The number of the line of s on which p stands. */
static size_t line_of(const char *s, const char *p)
{
    size_t n = 1;
    for (; s < p; s++)
        n += *s == '\n';
    return n;
}

/* Is word at p a whole identifier of s (no identifier character on either side)? */
static int whole_word(const char *s, const char *p, size_t len)
{
    const int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    const int after = isalnum((unsigned char)p[len]) || p[len] == '_';
    return !before && !after;
}

/* Checks the text of one core file (name: for the message) against the rules of the
 * core. Returns 0, or -1 with the first breach in why. */
static int core_rules(const char *name, const char *text, char *why, size_t n)
{
    char *code = strdup(text), *bare = strdup(text);
    ck_assert_ptr_nonnull(code);
    ck_assert_ptr_nonnull(bare);
    blank_comments(code, 0); /* literals kept: the includes and the word gnuplot */
    blank_comments(bare, 1); /* literals blanked: calls */
    why[0] = '\0';
    for (const char *p = strstr(code, "#"); p && !why[0]; p = strstr(p + 1, "#")) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "include", 7) != 0)
            continue;
        q += 7;
        while (*q == ' ' || *q == '\t')
            q++;
        const size_t len = strcspn(q + 1, "\">\n");
        char path[256];
        snprintf(path, sizeof path, "%.*s", (int)(len < 255 ? len : 255), q + 1);
        if (*q == '"' && (strstr(path, "cli/") || strstr(path, "web/")))
            snprintf(why, n, "%s:%zu includes the front-end header \"%s\"", name,
                     line_of(code, p), path);
        for (const char *const *h = banned_headers; *h && !why[0]; h++)
            if (*q == '<' && strcmp(path, *h) == 0)
                snprintf(why, n, "%s:%zu includes <%s>", name, line_of(code, p), path);
    }
    for (const char *const *c = banned_calls; *c && !why[0]; c++) {
        const size_t len = strlen(*c);
        for (const char *p = strstr(bare, *c); p && !why[0]; p = strstr(p + 1, *c)) {
            const char *after = p + len;
            while (*after == ' ' || *after == '\t')
                after++;
            /* a call or a pointer to the function, never a member (ops->system) */
            const int member = p > bare && (p[-1] == '.' || p[-1] == '>');
            if (whole_word(bare, p, len) && !member && *after == '(')
                snprintf(why, n, "%s:%zu calls %s()", name, line_of(bare, p), *c);
        }
    }
    for (const char *const *w = banned_words; *w && !why[0]; w++) {
        const size_t len = strlen(*w);
        for (const char *p = strstr(code, *w); p && !why[0]; p = strstr(p + 1, *w))
            if (whole_word(code, p, len))
                snprintf(why, n, "%s:%zu names %s", name, line_of(code, p), *w);
    }
    free(code);
    free(bare);
    return why[0] ? -1 : 0;
}

/* Checks that the text of one source file (name: for the message) has at most max
 * lines. Returns 0, or -1 with the count in why. */
static int length_rule(const char *name, const char *text, size_t max, char *why, size_t n)
{
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    if (*text && text[strlen(text) - 1] != '\n')
        lines++; /* a last line without its newline */
    why[0] = '\0';
    if (lines > max)
        snprintf(why, n, "%s has %zu lines (at most %zu: split it along a seam, each part "
                 "with its purpose and design block)", name, lines, max);
    return why[0] ? -1 : 0;
}

/* Every .c and .h file of common/core keeps to the core's rules. */
START_TEST(core_includes_no_front_end_and_runs_nothing)
{
    static char files[LAYERS_MAX_FILES][PATH_LEN];
    const size_t nf = ho_find_files("common/core/*.[ch]", files, LAYERS_MAX_FILES);
    ck_assert_msg(nf > 20, "found %zu files in common/core (run from the top of the tree)",
                  nf);
    for (size_t i = 0; i < nf; i++) {
        char *text = ho_read_file(files[i]);
        char why[512];
        ck_assert_msg(text != NULL, "cannot read %s", files[i]);
        ck_assert_msg(core_rules(files[i], text, why, sizeof why) == 0, "%s", why);
        free(text);
    }
}
END_TEST

/* No source file of the code folders, or of the programs that write the labs' data and
 * worksheets, is longer than LAYERS_MAX_LINES. */
START_TEST(no_source_file_over_the_limit)
{
    static const char *const pats[] = {"common/core/*.[ch]", "common/cli/*.[ch]",
                                       "common/web/*.[ch]", "lstm/*.[ch]",
                                       "rnn_attention/*.[ch]", "transformer/*.[ch]",
                                       "docs/labs/data/*.[ch]", "docs/labs/worksheets/*.[ch]",
                                       NULL};
    static char files[LAYERS_MAX_FILES][PATH_LEN];
    size_t nf = 0;
    for (const char *const *p = pats; *p; p++)
        nf += ho_find_files(*p, files + nf, LAYERS_MAX_FILES - nf);
    ck_assert_msg(nf > 60 && nf < LAYERS_MAX_FILES, "found %zu source files", nf);
    for (size_t i = 0; i < nf; i++) {
        char *text = ho_read_file(files[i]);
        char why[512];
        ck_assert_msg(text != NULL, "cannot read %s", files[i]);
        ck_assert_msg(length_rule(files[i], text, LAYERS_MAX_LINES, why, sizeof why) == 0,
                      "%s", why);
        free(text);
    }
}
END_TEST

/* Texts that break a rule once each, and the line the rule must give. */
static const struct {
    const char *text, *breach;
} breaches[] = {
    {"#include \"../cli/args.h\"\n", "includes the front-end header \"../cli/args.h\""},
    {"#include \"../web/page.h\"\n", "includes the front-end header \"../web/page.h\""},
    {"#  include <dlfcn.h>\n", "includes <dlfcn.h>"},
    {"int f(void)\n{\n    return fork();\n}\n", "t.c:3 calls fork()"},
    {"void g(void) { execvp (\"x\", 0); }\n", "calls execvp()"},
    {"FILE *h(void) { return popen(\"ls\", \"r\"); }\n", "calls popen()"},
    {"int i(void) { return system(\"ls\"); }\n", "calls system()"},
    {"void j(void) { signal(2, 0); }\n", "calls signal()"},
    {"void k(void) { struct sigaction sa; sigaction(2, &sa, 0); }\n", "calls sigaction()"},
    {"int l(int fd) { return flock(fd, 2); }\n", "calls flock()"},
    {"int m(int fd) { return fcntl(fd, F_SETLKW, 0); }\n", "names F_SETLKW"},
    {"void *n(void) { return dlsym(0, \"x\"); }\n", "calls dlsym()"},
    {"const char *o = \"gnuplot\";\n", "names gnuplot"},
};

/* Texts each rule must let through: the words in comments, strings and members. */
static const char *const clean[] = {
    "/* no fork(), no gnuplot, no #include \"../cli/args.h\" here */\n",
    "// system(\"x\") in a comment\n",
    "const char *s = \"cannot fork(): see signal(7)\";\n",
    "int f(const struct ops *o) { return o->system(1) + o->signal(2); }\n",
    "int my_fork(void); int forks(int); int g(void) { return my_fork() + forks(1); }\n",
    "int h(int fd) { return fcntl(fd, F_GETFL); }\n",
    "#include <signal.h>\nvolatile sig_atomic_t *stop;\n",
};

/* The rules fire on each breach and on nothing else: the tests above cannot pass
 * vacuously. */
START_TEST(rules_catch_what_they_forbid)
{
    char why[512];
    for (size_t k = 0; k < sizeof breaches / sizeof breaches[0]; k++) {
        ck_assert_msg(core_rules("t.c", breaches[k].text, why, sizeof why) == -1,
                      "not caught: %s", breaches[k].text);
        ck_assert_msg(strstr(why, breaches[k].breach) != NULL, "for %s: '%s' (want '%s')",
                      breaches[k].text, why, breaches[k].breach);
    }
    for (size_t k = 0; k < sizeof clean / sizeof clean[0]; k++)
        ck_assert_msg(core_rules("t.c", clean[k], why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(length_rule("t.c", "a\nb\nc\n", 3, why, sizeof why), 0);
    ck_assert_int_eq(length_rule("t.c", "a\nb\nc", 3, why, sizeof why), 0);
    ck_assert_int_eq(length_rule("t.c", "a\nb\nc\nd\n", 3, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "t.c has 4 lines") != NULL, "%s", why);
    ck_assert_int_eq(length_rule("t.c", "a\nb\nc\nd", 3, why, sizeof why), -1);
}
END_TEST

Suite *make_layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("layers");
    tcase_add_test(tc, core_includes_no_front_end_and_runs_nothing);
    tcase_add_test(tc, no_source_file_over_the_limit);
    tcase_add_test(tc, rules_catch_what_they_forbid);
    suite_add_tcase(s, tc);
    return s;
}
