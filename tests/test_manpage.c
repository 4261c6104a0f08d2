/* test_manpage.c — the manual page (attnlab.1) says what the program does.
 *
 * What is checked, against the program itself rather than a copy of its facts:
 *   - every flag a command's --help lists is in the manual, and every flag the manual
 *     names is one some --help lists (so neither side keeps a flag the other dropped);
 *   - every setting has an entry whose default is the program's: the generic default
 *     (config_defaults), and beside it each model whose own recipe sets another value
 *     ("lstm 0.003" for --lr), as `attnlab train --help` prints them;
 *   - the presets of `attnlab compare --help` are the ones the manual lists, each with
 *     the seeds, steps, training and evaluation lengths the help prints;
 *   - groff formats the page without a warning (when groff is installed).
 *
 * Design. The page is read as a reader sees it: man_text() turns the roff source into
 * plain lines (requests dropped, font macros joined as they print, "\-" as "-"), with
 * each paragraph break (.TP, .IP, .PP) as a line "@" and each heading as "#"/"##" lines,
 * so an entry is the lines from its tag to the next "@". Runs from the top of the
 * source tree, like the other suites. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/core/config.h"
#include "../common/core/model.h"
#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

#define MAN_PAGE "attnlab.1"

/* ---- the page as plain text ------------------------------------------------------------ */

/* The room a growing string of len bytes has: the next power of two above len (at
 * least 256), so that appending a byte at a time reallocates only log(n) times. */
static size_t room_of(size_t len)
{
    size_t cap = 256;
    while (cap <= len)
        cap *= 2;
    return cap;
}

/* Appends n bytes of s to the growing string *t of length *len. */
static void put(char **t, size_t *len, const char *s, size_t n)
{
    if (!*t || room_of(*len + n) != room_of(*len)) {
        char *more = realloc(*t, room_of(*len + n));
        ck_assert_ptr_nonnull(more);
        *t = more;
    }
    memcpy(*t + *len, s, n);
    *len += n;
    (*t)[*len] = '\0';
}

/* Appends the text of one roff line (escapes resolved: \- \c \fX \(em \(dq and the
 * rest of \(xx as "?"); with join set, the macro arguments are glued together the way
 * .BI, .BR ... print them, else separated by one space. */
static void put_args(char **t, size_t *len, const char *s, int join)
{
    int quoted = 0;
    for (; *s; s++) {
        if (*s == '"') {
            quoted = !quoted;
            continue;
        }
        if ((*s == ' ' || *s == '\t') && !quoted) {
            if (!join && *len && (*t)[*len - 1] != ' ' && (*t)[*len - 1] != '\n')
                put(t, len, " ", 1);
            continue;
        }
        if (*s == '\\' && s[1]) {
            const char e = *++s;
            if (e == '-' || e == 'e')
                put(t, len, e == '-' ? "-" : "\\", 1);
            else if (e == 'f' && s[1])
                s++; /* a font change prints nothing */
            else if (e == '(' && s[1] && s[2]) {
                put(t, len, strncmp(s + 1, "dq", 2) == 0 ? "\"" : "?", 1);
                s += 2;
            } else if (e != 'c' && e != '&')
                put(t, len, s, 1);
            continue;
        }
        put(t, len, s, 1);
    }
}

/* The manual page as plain lines (free it). */
static char *man_text(void)
{
    char *src = ru_slurp(MAN_PAGE, NULL);
    ck_assert_msg(src != NULL, "cannot read %s", MAN_PAGE);
    char *t = NULL;
    size_t len = 0;
    put(&t, &len, "", 0);
    for (char *line = strtok(src, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '.') {
            put_args(&t, &len, line, 0);
        } else {
            char name[8] = "";
            size_t k = 0;
            const char *a = line + 1;
            while (*a && *a != ' ' && k + 1 < sizeof name)
                name[k++] = *a++;
            name[k] = '\0';
            while (*a == ' ')
                a++;
            if (strcmp(name, "SH") == 0 || strcmp(name, "SS") == 0) {
                put(&t, &len, name[1] == 'H' ? "# " : "## ", name[1] == 'H' ? 2 : 3);
                put_args(&t, &len, a, 0);
            } else if (strcmp(name, "TP") == 0 || strcmp(name, "IP") == 0 ||
                       strcmp(name, "PP") == 0 || strcmp(name, "RE") == 0) {
                put(&t, &len, "@", 1);
            } else if (strcmp(name, "B") == 0 || strcmp(name, "I") == 0) {
                put_args(&t, &len, a, 0);
            } else if (strlen(name) == 2 && strchr("BIR", name[0]) && strchr("BIR", name[1])) {
                put_args(&t, &len, a, 1);
            } else {
                continue; /* comments and layout requests print nothing */
            }
        }
        put(&t, &len, "\n", 1);
    }
    free(src);
    return t;
}

/* Is the word at p (of length n) a whole word of text: no letter, digit, '-' or '_'
 * right before or after it? */
static int whole_word(const char *text, const char *p, size_t n)
{
    const char *word = "abcdefghijklmnopqrstuvwxyz0123456789-_";
    return (p == text || !strchr(word, p[-1])) &&
           (p[n] == '\0' || !strchr(word, p[n]));
}

/* Does text hold word as a whole word? */
static int has_word(const char *text, const char *word)
{
    const size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        if (whole_word(text, p, n))
            return 1;
    return 0;
}

/* The entry of the manual that starts at the line `tag` or `tag ARG` inside the section
 * or subsection titled `section`: its lines up to the next paragraph break, joined by
 * spaces, into buf. Returns 0, or -1 when there is no such entry. */
static int man_entry(const char *man, const char *section, const char *tag, char *buf,
                     size_t n)
{
    char head[128];
    snprintf(head, sizeof head, "\n## %s\n", section);
    const char *s = strstr(man, head);
    if (!s) {
        snprintf(head, sizeof head, "\n# %s\n", section);
        s = strstr(man, head);
    }
    if (!s)
        return -1;
    s += strlen(head);
    const char *end = strstr(s, "\n#");
    const size_t tl = strlen(tag);
    for (const char *p = s; p && (!end || p < end); p = strchr(p, '\n'), p = p ? p + 1 : p) {
        if (strncmp(p, "@\n", 2) != 0)
            continue;
        const char *l = p + 2;
        if (strncmp(l, tag, tl) != 0 || (l[tl] != '\n' && l[tl] != ' '))
            continue;
        const char *stop = strstr(l, "\n@");
        size_t k = 0;
        for (const char *q = l; *q && q != stop && k + 1 < n; q++)
            buf[k++] = *q == '\n' ? ' ' : *q;
        buf[k] = '\0';
        return 0;
    }
    return -1;
}

/* Does entry hold "default VALUE" with VALUE whole (not the start of a longer number)? */
static int says_default(const char *entry, const char *value)
{
    char want[160];
    snprintf(want, sizeof want, "default %s", value);
    for (const char *p = strstr(entry, want); p; p = strstr(p + 1, want)) {
        const char after = p[strlen(want)];
        if (!(after >= '0' && after <= '9') && after != '.' && after != 'e')
            return 1;
    }
    return 0;
}

/* ---- what the program prints ------------------------------------------------------------ */

static const char *const commands[] = {"train",   "eval",   "gradcheck", "attention",
                                       "compare", "report", "bench",     NULL};

/* `attnlab CMD --help` into r (the test fails unless it succeeds). */
static void help_of(run_out *r, const char *cmd)
{
    const char *args[] = {cmd, "--help", NULL};
    cli_run(r, NULL, args);
    ck_assert_msg(r->status == 0, "attnlab %s --help: status %d", cmd, r->status);
}

/* Calls each(flag, ctx) for every "--flag" of text that starts a word. */
static void each_flag(const char *text, void (*each)(const char *flag, void *ctx), void *ctx)
{
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
        if (p > text && strchr("abcdefghijklmnopqrstuvwxyz0123456789-_", p[-1]))
            continue;
        size_t n = 2;
        while (p[n] && strchr("abcdefghijklmnopqrstuvwxyz0123456789-", p[n]))
            n++;
        if (n < 4 || p[2] < 'a' || p[2] > 'z')
            continue;
        char flag[64];
        snprintf(flag, sizeof flag, "%.*s", (int)n, p);
        while (flag[strlen(flag) - 1] == '-') /* "--flag-" at a line end */
            flag[strlen(flag) - 1] = '\0';
        each(flag, ctx);
    }
}

struct flag_check {
    const char *text; /* where the flag must be */
    const char *what; /* its name, for the message */
    const char *from; /* where the flag was found */
};

static void flag_must_be_in(const char *flag, void *ctx)
{
    const struct flag_check *c = ctx;
    ck_assert_msg(has_word(c->text, flag), "%s names %s, missing from %s", c->from, flag,
                  c->what);
}

/* Runs argv (argv[0] looked up in PATH) with standard input and output from and to
 * /dev/null and standard error into err (NUL-terminated, cut to n - 1 bytes). Returns
 * the exit status, 127 when it could not start, -1 when it died of a signal. */
static int run_external(const char *const *argv, char *err, size_t n)
{
    char log[] = "/tmp/attnlab-manpage-XXXXXX";
    int fd = mkstemp(log);
    ck_assert(fd >= 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null < 0)
            _exit(127);
        dup2(null, 0);
        dup2(null, 1);
        dup2(fd, 2);
        char *v[16];
        size_t k = 0;
        for (; argv[k] && k + 1 < sizeof v / sizeof v[0]; k++)
            v[k] = strdup(argv[k]);
        v[k] = NULL;
        execvp(v[0], v);
        _exit(127);
    }
    close(fd);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    cli_slurp(log, err, n);
    unlink(log);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the tests ------------------------------------------------------------------------------ */

START_TEST(every_flag_of_the_help_is_in_the_manual)
{
    char *man = man_text();
    static run_out r;
    for (const char *const *cmd = commands; *cmd; cmd++) {
        help_of(&r, *cmd);
        char from[64];
        snprintf(from, sizeof from, "attnlab %s --help", *cmd);
        struct flag_check c = {man, MAN_PAGE, from};
        each_flag(r.out, flag_must_be_in, &c);
    }
    free(man);
}
END_TEST

START_TEST(every_flag_of_the_manual_is_in_a_help)
{
    char *man = man_text();
    char *all = NULL;
    size_t len = 0;
    put(&all, &len, "--help --version\n", strlen("--help --version\n"));
    static run_out r;
    for (const char *const *cmd = commands; *cmd; cmd++) {
        help_of(&r, *cmd);
        put(&all, &len, r.out, strlen(r.out));
    }
    struct flag_check c = {all, "every --help", MAN_PAGE};
    each_flag(man, flag_must_be_in, &c);
    free(all);
    free(man);
}
END_TEST

START_TEST(every_setting_has_its_default)
{
    char *man = man_text();
    config generic;
    config_defaults(&generic);
    static char entry[8192];
    static run_out help;
    help_of(&help, "train");
    for (size_t k = 0; k < config_n_fields; k++) {
        const config_field *f = &config_fields[k];
        char flag[64], tag[80], value[128];
        config_flag_name(f, flag, sizeof flag);
        snprintf(tag, sizeof tag, "--%s", flag);
        ck_assert_msg(man_entry(man, "Settings", tag, entry, sizeof entry) == 0,
                      "%s: no entry for %s under Settings", MAN_PAGE, tag);
        if (f->type == CFG_BOOL)
            continue; /* a switch: no value, so no default to state */
        config_format(&generic, f, value, sizeof value);
        ck_assert_msg(says_default(entry, value), "%s: %s does not say 'default %s': %s",
                      MAN_PAGE, tag, value, entry);
        /* a model whose recipe sets it otherwise is named with its value */
        for (size_t m = 0; model_registry[m]; m++) {
            config c;
            char own[128], want[300];
            config_defaults(&c);
            model_registry[m]->defaults(&c);
            config_format(&c, f, own, sizeof own);
            if (strcmp(own, value) == 0)
                continue;
            snprintf(want, sizeof want, "%s %s", model_registry[m]->name, own);
            ck_assert_msg(strstr(entry, want) != NULL,
                          "%s: %s does not say '%s' (the default of %s is %s): %s", MAN_PAGE,
                          tag, want, model_registry[m]->name, own, entry);
            /* and so does the settings list of train --help, on the flag's line */
            char line[96];
            snprintf(line, sizeof line, "\n  %s ", tag);
            const char *h = strstr(help.out, line);
            ck_assert_msg(h && strstr(h, want) && strstr(h, want) < strchr(h + 1, '\n'),
                          "attnlab train --help: the line of %s does not say '%s'", tag, want);
        }
    }
    free(man);
}
END_TEST

START_TEST(the_presets_are_those_of_compare)
{
    char *man = man_text();
    static run_out r;
    help_of(&r, "compare");
    /* the usage line's list of presets, as the manual's --preset entry names them */
    const char *u = strstr(r.out, "[--preset ");
    ck_assert_ptr_nonnull(u);
    char list[128], tag[160];
    snprintf(list, sizeof list, "%.*s", (int)strcspn(u + 10, "]"), u + 10);
    snprintf(tag, sizeof tag, "--preset %s", list);
    static char entry[4096];
    ck_assert_msg(man_entry(man, "compare", tag, entry, sizeof entry) == 0,
                  "%s: no entry '%s' under compare", MAN_PAGE, tag);
    /* and the synopsis, whose words span lines */
    char synopsis[200];
    snprintf(synopsis, sizeof synopsis, "[%s]", tag);
    for (char *q = man; *q; q++)
        if (*q == '\n')
            *q = ' ';
    ck_assert_msg(strstr(man, synopsis) != NULL, "%s: the synopsis has no %s", MAN_PAGE,
                  synopsis);
    free(man);
    man = man_text();
    /* each preset line of the help: "  NAME  N seed(s), S steps, train A:B, eval SPEC: ..." */
    const char *p = strstr(r.out, "\nPresets");
    ck_assert_ptr_nonnull(p);
    size_t seen = 0;
    for (p = strchr(p + 1, '\n'); p && strncmp(p, "\n  ", 3) == 0; p = strchr(p + 1, '\n')) {
        char name[32], train[32], eval[64];
        unsigned seeds, steps;
        ck_assert_msg(sscanf(p + 1, " %31s %u seed(s), %u steps, train %31[0-9:],", name, &seeds,
                             &steps, train) == 4,
                      "cannot read the preset line: %.80s", p + 1);
        /* the evaluation lengths A:B:STEP end where ": " starts the preset's purpose */
        const char *e = strstr(p, ", eval "), *e_end = e ? strstr(e, ": ") : NULL;
        ck_assert_msg(e_end != NULL, "cannot read the preset line: %.80s", p + 1);
        snprintf(eval, sizeof eval, "%.*s", (int)(e_end - e - 7), e + 7);
        ck_assert_msg(has_word(list, name), "the usage of compare does not list preset %s",
                      name);
        char text[8192], want[4][128];
        ck_assert_msg(man_entry(man, "compare", name, text, sizeof text) == 0,
                      "%s: no entry for the preset %s", MAN_PAGE, name);
        snprintf(want[0], sizeof want[0], "%u seed", seeds);
        snprintf(want[1], sizeof want[1], "%u steps", steps);
        snprintf(want[2], sizeof want[2], "train %s", train);
        snprintf(want[3], sizeof want[3], "eval %s", eval);
        for (int w = 0; w < 4; w++)
            ck_assert_msg(strstr(text, want[w]) != NULL, "%s: the preset %s does not say "
                          "'%s' (compare --help: %.100s)", MAN_PAGE, name, want[w], p + 1);
        seen++;
    }
    ck_assert_msg(seen >= 3, "compare --help lists %zu presets", seen);
    free(man);
}
END_TEST

START_TEST(groff_formats_it_without_a_warning)
{
    /* -z: no output, only the diagnostics; -ww: every warning */
    const char *version[] = {"groff", "--version", NULL};
    char err[4096];
    if (run_external(version, err, sizeof err) != 0)
        return; /* no groff here (macOS ships mandoc): nothing to check */
    const char *args[] = {"groff", "-man", "-Tutf8", "-ww", "-z", MAN_PAGE, NULL};
    int st = run_external(args, err, sizeof err);
    ck_assert_msg(st == 0 && err[0] == '\0', "groff -man -ww %s: status %d: %s", MAN_PAGE, st,
                  err);
}
END_TEST

Suite *make_manpage_suite(void)
{
    Suite *s = suite_create("manpage");
    TCase *tc = tcase_create("manpage");
    tcase_set_timeout(tc, 60); /* each test runs the program a few times (slow when sanitized) */
    tcase_add_test(tc, every_flag_of_the_help_is_in_the_manual);
    tcase_add_test(tc, every_flag_of_the_manual_is_in_a_help);
    tcase_add_test(tc, every_setting_has_its_default);
    tcase_add_test(tc, the_presets_are_those_of_compare);
    tcase_add_test(tc, groff_formats_it_without_a_warning);
    suite_add_tcase(s, tc);
    return s;
}
