/* report_draw.c — drawing a comparison's figures with gnuplot, and nothing else with it
 * (see report.h); and asking fontconfig for a font that draws Chinese (report_cjk_font).
 *
 * Design. The figure scripts (plots/NAME.gp) are the only place that knows what a figure
 * shows; this file knows their names and the figures each one draws from the table
 * report_figures (report_figures.c, which the browser page shares).
 *
 * Nothing read or typed reaches gnuplot as code. gnuplot parses its -e argument and every
 * file it loads as commands, and runs a shell for a backquote even inside double quotes,
 * so a path or a name pasted into a command is a program. Therefore:
 *   - the comparison directory is not passed at all: gnuplot runs with it as its working
 *     directory (chdir in the child) and the scripts are told dir='.';
 *   - the folder the figures go to is figs='figures/.draw-XXXXXX', made here by mkdtemp,
 *     so letters and digits only (checked before use);
 *   - the script is an argument of gnuplot, a file name it opens and never parses, made
 *     absolute (realpath) because of the chdir;
 *   - figure_vars.gp and trace/NAME/trace_vars.gp, which the scripts load, hold numbers,
 *     strings of letters, digits and _.:=,+- in double quotes (report_write_vars refuses
 *     anything else) and text in single quotes, where only the quote, doubled, means
 *     something (the task's name, the labels of the traces);
 *   - everything else — the tables — gnuplot reads as data files;
 *   - the scripts start no shell: no system(), no piped data file; the folder figs
 *     exists before gnuplot starts.
 *
 * Nothing half-drawn replaces a figure. gnuplot writes in place and goes on after a
 * failed write (a full disk gave 0-byte and truncated files, and "wrote"), so each
 * script writes into the temporary folder figs; once gnuplot has exited with status 0,
 * each figure whose PNG ends with the IEND chunk and whose SVG ends with </svg> is
 * flushed (fsync) and renamed into figures/ (both are checked before either moves, so
 * a PNG never goes in without its SVG). Anything else is a failed figure: one line names
 * it, the figure already in figures/ stays, and report_draw returns -1 (exit status 1)
 * once every script has run. A process killed midway can leave figures/.draw-* behind,
 * which is safe to delete.
 *
 * What gnuplot prints is collected from a pipe: the scripts' "wrote" lines name the
 * temporary folder, so they are replaced by this file's own, and every other line (a
 * skipped figure, a warning) is passed on to stderr.
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/afile.h"
#include "buildinfo.h"
#include "rundir.h"
#include "safedir.h"

/* Is path an existing regular file? */
static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *report_plots_dir(void)
{
    static char dir[AFILE_PATH_MAX];
    char probe[AFILE_PATH_MAX + 32];
    const char *env = getenv("ATTNLAB_PLOTS");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    /* next to the program: build/attnlab, build/san/attnlab, PREFIX/bin/attnlab */
    char exe[AFILE_PATH_MAX];
    if (buildinfo_self_path(exe, sizeof exe) != 0)
        return NULL;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const rel[] = {"/../plots", "/../../plots", "/../share/attnlab/plots"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(dir, sizeof dir, "%s%s", exe, rel[i]);
        snprintf(probe, sizeof probe, "%s/accuracy.gp", dir);
        if (is_file(probe))
            return dir;
    }
    return NULL;
}

#define N_FIGURES REPORT_N_FIGURES
#define figures report_figures
_Static_assert(N_FIGURES * 4 <= REPORT_MAX_FIGURES, "report_drawn holds every output");

/* ---- running gnuplot ----------------------------------------------------------------- */

/* How one gnuplot run ended, and what it printed. */
typedef struct gp_run {
    int started;      /* 0: gnuplot could not be started (errno in err_no) */
    int err_no;
    int at_exec;      /* when not started: 1 if exec failed (no gnuplot), 0 if before it */
    int status;       /* its exit status, or -1 when a signal ended it */
    int sig;          /* that signal */
    char text[16384]; /* the end of what it printed (stdout and stderr), NUL-terminated */
    size_t len;
} gp_run;

/* Runs `gnuplot -e "dir='.'; figs='FIGS'; formats='png svg'" SCRIPT` in directory out
 * and fills g. (The page in the browser runs the same scripts with formats='svg'.) */
static void run_gnuplot(const char *script, const char *out, const char *figs, gp_run *g)
{
    char expr[160];
    snprintf(expr, sizeof expr, "dir='.'; figs='%s'; formats='png svg'", figs);
    memset(g, 0, sizeof *g);
    g->status = -1;
    int text[2], fail[2];
    if (pipe(text) != 0) {
        g->err_no = errno;
        return;
    }
    if (pipe(fail) != 0) {
        g->err_no = errno;
        close(text[0]);
        close(text[1]);
        return;
    }
    /* the failure pipe closes itself at exec: a read that gets nothing means it ran */
    (void)fcntl(fail[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(text[0]);
        close(fail[0]);
        int devnull = open("/dev/null", O_RDONLY);
        int e[2] = {0, 0}; /* {reached exec, errno} */
        if (chdir(out) == 0 && devnull >= 0 && dup2(devnull, 0) >= 0 &&
            dup2(text[1], 1) >= 0 && dup2(text[1], 2) >= 0) {
            execlp("gnuplot", "gnuplot", "-e", expr, script, (char *)NULL);
            e[0] = 1;
        }
        e[1] = errno;
        ssize_t w = write(fail[1], e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(text[1]);
    close(fail[1]);
    if (pid < 0) {
        g->err_no = errno;
        close(text[0]);
        close(fail[0]);
        return;
    }
    /* keep the end of the output: gnuplot's error is its last line */
    const size_t cap = sizeof g->text - 1;
    for (;;) {
        if (g->len == cap) {
            memmove(g->text, g->text + cap / 2, cap - cap / 2);
            g->len = cap - cap / 2;
        }
        ssize_t r = read(text[0], g->text + g->len, cap - g->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        g->len += (size_t)r;
    }
    g->text[g->len] = '\0';
    close(text[0]);
    int e[2] = {0, 0};
    ssize_t got;
    while ((got = read(fail[0], e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(fail[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return;
    if (got == (ssize_t)sizeof e) {
        g->at_exec = e[0];
        g->err_no = e[1];
        return;
    }
    g->started = 1;
    if (WIFEXITED(st))
        g->status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        g->sig = WTERMSIG(st);
}

/* The last non-empty line of what gnuplot printed, made printable, into buf. */
static const char *last_line(const gp_run *g, char *buf, size_t n)
{
    char line[1024] = "";
    const char *end = g->text + g->len;
    while (end > g->text && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *start = end;
    while (start > g->text && start[-1] != '\n')
        start--;
    size_t l = (size_t)(end - start);
    l = l < sizeof line - 1 ? l : sizeof line - 1;
    memcpy(line, start, l);
    line[l] = '\0';
    return rundir_printable(line, buf, n);
}

/* Passes what gnuplot printed on to stderr, without the scripts' "wrote" lines. */
static void relay(const gp_run *g)
{
    char line[1024], shown[1200];
    for (const char *p = g->text; *p;) {
        size_t l = strcspn(p, "\n");
        size_t k = l < sizeof line - 1 ? l : sizeof line - 1;
        memcpy(line, p, k);
        line[k] = '\0';
        if (k > 0 && !strstr(line, ": wrote "))
            fprintf(stderr, "%s\n", rundir_printable(line, shown, sizeof shown));
        p += l + (p[l] == '\n');
    }
}

/* ---- checking and moving a figure into place ------------------------------------------ */

/* Is path a complete PNG: the signature first, the IEND chunk last? */
static int png_complete(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                           0xae, 0x42, 0x60, 0x82};
    unsigned char head[8], tail[12];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int ok = fread(head, 1, 8, f) == 8 && memcmp(head, sig, 8) == 0 &&
             fseek(f, -12, SEEK_END) == 0 && fread(tail, 1, 12, f) == 12 &&
             memcmp(tail, iend, 12) == 0;
    fclose(f);
    return ok;
}

/* Is path a complete SVG: "</svg>" at its end (then only white space)? */
static int svg_complete(const char *path)
{
    char tail[64];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    size_t want = size > (long)sizeof tail ? sizeof tail : (size_t)(size > 0 ? size : 0);
    size_t got = want && fseek(f, -(long)want, SEEK_END) == 0 ? fread(tail, 1, want, f) : 0;
    fclose(f);
    while (got > 0 && strchr(" \t\r\n", tail[got - 1]))
        got--;
    return got >= 6 && memcmp(tail + got - 6, "</svg>", 6) == 0;
}

/* Flushes path to the disk (the rename must not overtake the data). */
static int sync_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Flushes the renames in dir (best effort: some file systems refuse a directory). */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* What became of one figure. */
typedef enum { FIG_ABSENT, FIG_MOVED, FIG_FAILED } fig_result;

/* Writes dir/name.ext into buf; -1 when it does not fit. */
static int figure_path(char *buf, size_t n, const char *dir, const char *name, const char *ext)
{
    int w = snprintf(buf, n, "%s/%s.%s", dir, name, ext);
    return w >= 0 && (size_t)w < n ? 0 : -1;
}

/* Checks the staged figure name (NAME.png and NAME.svg in stage) and moves both into
 * figdir. Prints one line naming it when it fails. */
static fig_result settle(const char *stage, const char *figdir, const char *name,
                         const char *shown_out)
{
    char png[AFILE_PATH_MAX], svg[AFILE_PATH_MAX], to_png[AFILE_PATH_MAX],
        to_svg[AFILE_PATH_MAX];
    const char *why = NULL;
    if (figure_path(png, sizeof png, stage, name, "png") ||
        figure_path(svg, sizeof svg, stage, name, "svg") ||
        figure_path(to_png, sizeof to_png, figdir, name, "png") ||
        figure_path(to_svg, sizeof to_svg, figdir, name, "svg")) {
        why = "the path is too long";
    } else {
        const int has_png = access(png, F_OK) == 0, has_svg = access(svg, F_OK) == 0;
        if (!has_png && !has_svg)
            return FIG_ABSENT; /* the script skipped it, and said why */
        why = !has_png             ? "no PNG was written"
              : !has_svg           ? "no SVG was written"
              : !png_complete(png) ? "the PNG does not end with its IEND chunk"
              : !svg_complete(svg) ? "the SVG does not end with </svg>"
              : sync_file(png) != 0 || sync_file(svg) != 0 ? strerror(errno)
                                                            : NULL;
        if (!why && rename(png, to_png) != 0)
            why = strerror(errno);
        if (!why && rename(svg, to_svg) != 0)
            why = strerror(errno);
    }
    if (why) {
        fprintf(stderr, "attnlab report: figure %s was not drawn: %s (is the disk full?); "
                "%s/figures/%s.png and .svg are left as they were\n", name, why, shown_out,
                name);
        return FIG_FAILED;
    }
    return FIG_MOVED;
}

/* Removes the staging folder and whatever a failed script left in it. */
static void remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char path[AFILE_PATH_MAX];
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                afile_join(path, sizeof path, stage, e->d_name) == 0)
                (void)unlink(path);
        }
        closedir(d);
    }
    (void)rmdir(stage);
}

/* Writes s into buf as one shell word: as it is when it holds only characters the shell
 * leaves alone, else in single quotes ('\'' for a quote). For the hint of a message. */
static const char *shell_word(const char *s, char *buf, size_t n)
{
    if (*s && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "_./:=,+-@%")] == '\0') {
        snprintf(buf, n, "%s", s);
        return buf;
    }
    size_t o = 0;
    buf[o++] = '\'';
    for (; *s && o + 6 < n; s++)
        if (*s == '\'') {
            memcpy(buf + o, "'\\''", 4);
            o += 4;
        } else {
            buf[o++] = *s;
        }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

/* ---- a font for Chinese labels -------------------------------------------------------- */

/* Is s a font family figure_vars.gp can hold between double quotes: letters, digits,
 * spaces and _.:=,+- (the characters report.c's gp_string_ok takes), and not empty? */
static int family_ok(const char *s)
{
    return *s && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789 _.:=,+-")] == '\0';
}

int report_cjk_font(char *buf, size_t n)
{
    /* the faces preferred, in order: sans faces made for Simplified Chinese (Debian's
     * fonts-noto-cjk and fonts-wqy-*, then macOS's own); any other is taken after them */
    static const char *const liked[] = {"Noto Sans CJK SC", "Source Han Sans SC",
                                        "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
                                        "PingFang SC", "Hiragino Sans GB", "Heiti SC",
                                        "STHeiti"};
    enum { N_LIKED = sizeof liked / sizeof liked[0] };
    /* a constant command: nothing read or typed reaches the shell */
    FILE *p = popen("fc-list --format '%{family[0]}\\n' :lang=zh 2>/dev/null", "r");
    if (!p)
        return -1;
    char line[256], other[256] = "";
    size_t best = N_LIKED;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!family_ok(line) || strstr(line, "Mono"))
            continue; /* a name figure_vars.gp does not take, or a monospaced face */
        size_t k = 0;
        while (k < N_LIKED && strcmp(line, liked[k]) != 0)
            k++;
        if (k < best)
            best = k;
        else if (k == N_LIKED && (!other[0] || strcmp(line, other) < 0))
            snprintf(other, sizeof other, "%s", line); /* the same whatever fc-list's order */
    }
    (void)pclose(p);
    const char *font = best < N_LIKED ? liked[best] : other;
    if (!font[0] || strlen(font) >= n)
        return -1;
    snprintf(buf, n, "%s", font);
    return 0;
}

/* ---- drawing ------------------------------------------------------------------------- */

int report_draw(const char *out, const report_facts *fx, report_drawn *drawn, FILE *f,
                char *err, size_t n)
{
    static char shown[AFILE_PATH_MAX], plots[PATH_MAX];
    drawn->n = 0;
    rundir_printable(out, shown, sizeof shown);
    char figdir[AFILE_PATH_MAX], stage[AFILE_PATH_MAX];
    if (safedir_enter(out, "figures", figdir, sizeof figdir, err, n) != 0)
        return -1; /* a figures/ that is a link is refused (safedir.h) */
    const char *found = report_plots_dir();
    if (!found || !realpath(found, plots)) {
        fprintf(stderr, "attnlab report: the figure scripts (plots/) were not found; set "
                "ATTNLAB_PLOTS to their directory and run attnlab report again\n");
        return 0;
    }
    /* the folder the scripts write into, relative to out (gnuplot's working directory) */
    char figs[64] = "figures/.draw-XXXXXX";
    if (snprintf(stage, sizeof stage, "%s/%s", out, figs) >= (int)sizeof stage ||
        !mkdtemp(stage)) {
        snprintf(err, n, "cannot create a folder in %s/figures: %s", shown, strerror(errno));
        return -1;
    }
    memcpy(figs + strlen(figs) - 6, stage + strlen(stage) - 6, 6);
    if (figs[strspn(figs, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789/.-")] != '\0') {
        remove_stage(stage);
        snprintf(err, n, "mkdtemp made a folder name gnuplot is not given: %s", figs);
        return -1;
    }
    size_t failed = 0;
    int missing = 0, used[N_FIGURES] = {0};
    static gp_run g;
    for (size_t k = 0; k < N_FIGURES && !missing; k++) {
        const report_figure *fig = &figures[k];
        if (strcmp(fig->script, "cost") == 0 && !fx->have_cost) {
            fprintf(stderr, "attnlab report: no run measured its cost (train "
                    "--cost-lengths): no cost figure\n");
            continue;
        }
        if (strcmp(fig->script, "budget") == 0 && !fx->have_val) {
            fprintf(stderr, "attnlab report: no run logged a validation (train_log.tsv "
                    "without val_ columns): no budget figure\n");
            continue;
        }
        if (strcmp(fig->script, "capacity") == 0 && !fx->have_sweep)
            continue; /* no model at several sizes: nothing to compare (said in the help) */
        if (strcmp(fig->script, "sweep") == 0 && !fx->have_lrsweep)
            continue; /* no model at several rates */
        if (strcmp(fig->script, "bleu") == 0 && !fx->have_bleu)
            continue; /* no run has BLEU counts: a generated task */
        if (strcmp(fig->script, "distance") == 0 && !fx->have_distance)
            continue; /* a file task: no position says which source symbol it repeats */
        char script[PATH_MAX + 32];
        snprintf(script, sizeof script, "%s/%s.gp", plots, fig->script);
        run_gnuplot(script, out, figs, &g);
        if (!g.started) {
            char a[AFILE_PATH_MAX + 64], b[PATH_MAX + 64];
            missing = 1;
            if (g.at_exec && g.err_no == ENOENT) { /* not installed: not a failure */
                fprintf(stderr, "attnlab report: gnuplot not found: the tables are in %s; "
                        "draw the figures later with: cd %s && gnuplot -e \"dir='.'\" "
                        "%s/NAME.gp (one per script)\n", shown,
                        shell_word(shown, a, sizeof a), shell_word(plots, b, sizeof b));
            } else {
                fprintf(stderr, "attnlab report: gnuplot could not be started in %s: %s; "
                        "no figure was drawn\n", shown, strerror(g.err_no));
                failed++;
            }
            continue;
        }
        if (g.status != 0) {
            char how[64], last[600];
            if (g.status < 0)
                snprintf(how, sizeof how, "was ended by signal %d", g.sig);
            else
                snprintf(how, sizeof how, "exited with status %d", g.status);
            fprintf(stderr, "attnlab report: plots/%s.gp %s (%s): its figures were not "
                    "drawn; those in %s/figures/ are left as they were\n", fig->script,
                    how, last_line(&g, last, sizeof last), shown);
            failed++;
            continue;
        }
        relay(&g);
        for (size_t o = 0; o < 4 && fig->outputs[o]; o++) {
            fig_result r = settle(stage, figdir, fig->outputs[o], shown);
            failed += r == FIG_FAILED;
            if (r != FIG_MOVED)
                continue;
            used[k] = 1;
            drawn->fig[drawn->n].name = fig->outputs[o];
            drawn->fig[drawn->n].from = fig;
            drawn->n++;
            fprintf(f, "%s.gp: wrote %s/figures/%s.png and .svg\n", fig->script, shown,
                    fig->outputs[o]);
        }
    }
    remove_stage(stage);
    sync_dir(figdir);
    if (!missing) {
        fprintf(f, "figures drawn in %s/figures/ by:", shown);
        int any = 0;
        for (size_t k = 0; k < N_FIGURES; k++)
            if (used[k])
                fprintf(f, " %s.gp", figures[k].script), any = 1;
        fputs(any ? "\n" : " (none)\n", f);
    }
    if (failed) {
        snprintf(err, n, "some figures were not drawn (the lines above name them); the "
                 "tables in %s are written; fix the cause (a full disk?) and run the same "
                 "command again", shown);
        return -1;
    }
    return 0;
}
