/* testhandout.c — reading and running the commands of a lab handout (see testhandout.h). */
#include "testhandout.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ho_program(void)
{
    const char *p = getenv("ATTNLAB");
    return p && *p ? p : "build/attnlab";
}

/* Reads a whole file into a new NUL-terminated string (NULL when it cannot). */
char *ho_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 2) {
            char *more = realloc(buf, cap * 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int ho_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The file names matching pattern, sorted (glob), copied into out; returns the count. */
size_t ho_find_files(const char *pattern, char (*out)[PATH_LEN], size_t max)
{
    glob_t g;
    size_t n = 0;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (; n < g.gl_pathc && n < max; n++)
            snprintf(out[n], PATH_LEN, "%s", g.gl_pathv[n]);
        globfree(&g);
    }
    return n;
}

/* ---- reading the commands of a handout ---------------------------------------------- */

/* Splits one logical shell line into words, the way sh does for the simple commands the
 * handouts may use: blanks separate words; '...' is literal; "..." allows \" \\ \$ \`;
 * a backslash outside quotes escapes the next character. An unquoted | ends a pipeline
 * segment and is returned as the word "|". *bad is set when the segment holds anything a
 * handout's attnlab line must not (expansions, redirections, globs, lists). Returns the
 * number of words, or -1 when the line is too long or a quote is not closed. */
int ho_split_words(const char *s, char **out, int max, int *bad_segments)
{
    int n = 0, seg = 0;
    *bad_segments = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == max)
            return -1;
        if (*s == '|') {
            out[n++] = strdup("|");
            s++;
            seg++;
            continue;
        }
        char word[LINE_LEN];
        size_t k = 0;
        while (*s && *s != ' ' && *s != '\t' && *s != '|') {
            if (k + 2 >= sizeof word)
                return -1;
            if (*s == '\'') {
                const char *end = strchr(s + 1, '\'');
                if (!end)
                    return -1;
                for (s++; s < end && k + 2 < sizeof word; s++)
                    word[k++] = *s;
                s = end + 1;
            } else if (*s == '"') {
                for (s++; *s && *s != '"'; s++) {
                    if (*s == '$' || *s == '`')
                        *bad_segments |= 1 << seg;
                    if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
                        s++;
                    if (k + 2 < sizeof word)
                        word[k++] = *s;
                }
                if (*s != '"')
                    return -1;
                s++;
            } else if (*s == '\\' && s[1]) {
                word[k++] = s[1];
                s += 2;
            } else {
                if (strchr("$`;&<>()*?[]{}#~", *s))
                    *bad_segments |= 1 << seg;
                word[k++] = *s++;
            }
        }
        word[k] = '\0';
        out[n++] = strdup(word);
    }
    return n;
}

/* Is word the attnlab program as a handout writes it? */
static int is_attnlab_word(const char *w)
{
    const size_t n = strlen(w), k = strlen("build/attnlab");
    return strcmp(w, "build/attnlab") == 0 ||
           (n > k && strcmp(w + n - k - 1, "/build/attnlab") == 0);
}

/* Records the attnlab and gnuplot commands of one logical line (all its segments). */
static void add_line(handout *h, const char *line, int lineno)
{
    char *words[MAX_ARGS + 1];
    int bad = 0;
    int n = ho_split_words(line, words, MAX_ARGS, &bad);
    if (n < 0) {
        if (!h->err[0])
            snprintf(h->err, sizeof h->err, "%s:%d: cannot split the line into words",
                     h->path, lineno);
        return;
    }
    int seg = 0;
    for (int i = 0; i < n;) {
        int end = i;
        while (end < n && strcmp(words[end], "|") != 0)
            end++;
        const int attnlab = end > i && is_attnlab_word(words[i]);
        const int gnuplot = end > i && strcmp(words[i], "gnuplot") == 0;
        if ((attnlab || gnuplot) && (bad & (1 << seg)) && !h->err[0])
            snprintf(h->err, sizeof h->err, "%s:%d: a command of the handout uses shell "
                     "expansion, redirection or a list; write it as a plain command",
                     h->path, lineno);
        if ((attnlab || gnuplot) && h->ncmds < MAX_CMDS) {
            cmd *c = &h->cmds[h->ncmds++];
            c->argc = 0;
            c->line = lineno;
            c->is_attnlab = attnlab;
            for (int k = i; k < end; k++)
                c->argv[c->argc++] = strdup(words[k]);
            c->argv[c->argc] = NULL;
        }
        i = end + 1;
        seg++;
    }
    for (int i = 0; i < n; i++)
        free(words[i]);
}

/* Appends text and a newline to the growing string *s. */
void ho_append_line(char **s, const char *text)
{
    size_t a = *s ? strlen(*s) : 0, b = strlen(text);
    char *t = realloc(*s, a + b + 2);
    ck_assert_ptr_nonnull(t);
    memcpy(t + a, text, b);
    t[a + b] = '\n';
    t[a + b + 1] = '\0';
    *s = t;
}

/* Reads a handout: its text, and the commands of its ```sh blocks (lines ending in '\'
 * joined to the next). */
void handout_read(handout *h, const char *path)
{
    memset(h, 0, sizeof *h);
    snprintf(h->path, sizeof h->path, "%s", path);
    h->text = ho_read_file(path);
    ck_assert_msg(h->text != NULL, "cannot read %s", path);
    int in_sh = 0, in_fence = 0, lineno = 0, start = 0;
    char logical[LINE_LEN] = "";
    for (const char *p = h->text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[LINE_LEN];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : p + strlen(p);
        lineno++;
        const char *t = line;
        while (*t == ' ')
            t++;
        if (strncmp(t, "```", 3) == 0) {
            if (in_fence) {
                in_fence = in_sh = 0;
            } else {
                in_fence = 1;
                const char *lang = t + 3;
                in_sh = strncmp(lang, "sh", 2) == 0 && (lang[2] == '\0' || lang[2] == ' ');
            }
            continue;
        }
        if (!in_sh)
            continue;
        if (!logical[0])
            start = lineno;
        const size_t l = strlen(t), have = strlen(logical);
        const int more = l > 0 && t[l - 1] == '\\';
        if (have + l + 2 < sizeof logical) {
            const size_t take = more ? l - 1 : l;
            memcpy(logical + have, t, take);
            logical[have + take] = more ? ' ' : '\0';
            logical[have + take + (more ? 1 : 0)] = '\0';
        }
        if (more)
            continue;
        if (logical[0]) {
            ho_append_line(&h->sh, logical);
            add_line(h, logical, start);
        }
        logical[0] = '\0';
    }
    if (!h->sh)
        h->sh = strdup("");
}

void handout_free(handout *h)
{
    for (size_t i = 0; i < h->ncmds; i++)
        for (int k = 0; k < h->cmds[i].argc; k++)
            free(h->cmds[i].argv[k]);
    free(h->text);
    free(h->sh);
}

/* The command as text, for messages. */
void ho_cmd_text(const cmd *c, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int k = 0; k < c->argc; k++) {
        strncat(buf, k ? " " : "", n - strlen(buf) - 1);
        strncat(buf, c->argv[k], n - strlen(buf) - 1);
    }
}

/* ---- running a command ----------------------------------------------------------------- */

/* Runs argv (argv[0] is executed: a path, or a name looked up in PATH when search is set)
 * from the top of the tree with standard input from /dev/null and both outputs into
 * log. Returns the exit status, -1 when it died of a signal, 127 when it could not start. */
int ho_run_argv(char *const *argv, int search, const char *log)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0)
            _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        if (search)
            execvp(argv[0], argv);
        else
            execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last part of a log, for a failure message. */
void ho_log_tail(const char *log, char *buf, size_t n)
{
    char *text = ho_read_file(log);
    buf[0] = '\0';
    if (text) {
        size_t len = strlen(text);
        snprintf(buf, n, "%s", len >= n ? text + len - (n - 1) : text);
        free(text);
    }
}

void av_push(argvec *a, const char *s)
{
    ck_assert(a->n < (int)(sizeof a->v / sizeof a->v[0]) - 1);
    a->v[a->n++] = strdup(s);
    a->v[a->n] = NULL;
}

void av_free(argvec *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

/* s with every "results/labs/" moved under dir (into a new string). */
char *ho_relocate(const char *s, const char *dir)
{
    static const char key[] = "results/labs/";
    size_t extra = 0;
    for (const char *p = strstr(s, key); p; p = strstr(p + 1, key))
        extra += strlen(dir) + 1;
    char *out = malloc(strlen(s) + extra + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *p = s; *p;) {
        if (strncmp(p, key, sizeof key - 1) == 0 && (p == s || p[-1] != '/')) {
            o += sprintf(o, "%s/", dir);
        }
        *o++ = *p++;
    }
    *o = '\0';
    return out;
}

/* Builds the argument vector of c for running: the program (for attnlab) or gnuplot,
 * then the words, relocated under dir when dir is not NULL. */
void ho_build_args(argvec *a, const cmd *c, const char *dir)
{
    a->n = 0;
    av_push(a, c->is_attnlab ? ho_program() : c->argv[0]);
    for (int k = 1; k < c->argc; k++) {
        char *w = dir ? ho_relocate(c->argv[k], dir) : strdup(c->argv[k]);
        av_push(a, w);
        free(w);
    }
}

/* Does c hold the flag (as "--flag" or "--flag=...")? */
int ho_has_flag(const cmd *c, const char *flag)
{
    const size_t n = strlen(flag);
    for (int k = 2; k < c->argc; k++)
        if (strncmp(c->argv[k], flag, n) == 0 && (c->argv[k][n] == '\0' || c->argv[k][n] == '='))
            return 1;
    return 0;
}

const char *ho_flag_value(const cmd *c, const char *flag)
{
    const size_t n = strlen(flag);
    for (int k = 2; k < c->argc; k++) {
        if (strcmp(c->argv[k], flag) == 0 && k + 1 < c->argc)
            return c->argv[k + 1];
        if (strncmp(c->argv[k], flag, n) == 0 && c->argv[k][n] == '=')
            return c->argv[k] + n + 1;
    }
    return NULL;
}
