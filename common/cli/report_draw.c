/* report_draw.c — drawing a comparison's figures with gnuplot, and nothing else with it
 * (see report.h).
 *
 * Design. The figure scripts (plots/NAME.gp) are the only place that knows what a figure
 * shows; this file knows their names, the figures each one draws and the caption the
 * page shows under them (the table `figures`).
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

/* The figure scripts, each with the sentence the page shows under its figures. */
static const struct figure {
    const char *script;     /* plots/NAME.gp */
    const char *outputs[4]; /* figures it draws (without extension) */
    const char *caption;
} figures[] = {
    {"accuracy", {"accuracy"},
     "Token and whole-sequence accuracy against sequence length (mean over seeds, band: "
     "min-max). The shaded band is the training range; the dashed line is chance. Compare "
     "how each model's accuracy changes with the distance it must carry each symbol, "
     "inside the training range and beyond it. A model whose runs did not reach the "
     "target (the last column of the summary says so, and the budget figure marks the "
     "runs the cap stopped) is shown as it was when it stopped: its fall is that of a "
     "run cut short, not a limit of the model."},
    {"positions", {"positions"},
     "Accuracy at each output position for a few lengths: where in the sequence each "
     "model fails, position by position along the output. The same caution as above: "
     "for a model whose runs did not reach the target, where it fails is where a run "
     "still learning fails."},
    {"distance", {"distance"},
     "Accuracy at each output position against its gap: the steps between reading the "
     "source symbol that position repeats and writing it (lengths inside the training "
     "range, colour: the length; mean over seeds). In copy every position of a length "
     "has the same gap, the length, so distance and the amount stored grow together; in "
     "reverse the gap runs from 1 to 2L-1 within one length, while the amount stored "
     "stays L. A model limited by distance falls along the gap alike at every length; one "
     "limited by what it must store falls with the length at an equal gap."},
    {"bleu", {"bleu"},
     "BLEU-4 of the test set against source length, in bins of 5 words (mean over seeds, "
     "band: min-max; the key gives each group's BLEU over every length), the training "
     "range shaded: the shape of Bahdanau et al. (2015), Fig. 2. Look for the model "
     "without attention falling as sentences grow longer and the one with attention "
     "holding up, inside the training range and past it. Drawn for a task read from a "
     "file (the toy translation, or your own pairs)."},
    {"curves", {"curves"},
     "Training loss and teacher-forced token accuracy against step and against seconds "
     "(solid), with the loss and greedy token accuracy on the held-out validation set "
     "(dashed): how fast each model learns, per step and per unit of compute time. A "
     "validation loss rising while the training loss falls would be overfitting."},
    {"budget", {"budget"},
     "Validation accuracy against training steps and seconds (log scales; median over "
     "seeds, band: min-max): the whole-sequence accuracy at the longest training length "
     "and the token accuracy inside the training range. The horizontal gap between two "
     "models is how many times more training one needs for the same accuracy; a run "
     "stopped early is carried at its last validation. A cross marks the last validation "
     "of runs the cap stopped before the target; the dots are the medians of "
     "budget_at.tsv (filled: reached at that step; open: not reached, more than that)."},
    {"capacity", {"capacity"},
     "How far each setup copies against its size: the reach (the longest length up to "
     "which every length is copied at 99% token accuracy or more; median over seeds, bar: "
     "min-max) against the number of parameters, the setups of one model joined. Drawn "
     "when a model was trained at several sizes (compare --preset capacity)."},
    {"attention",
     {"attention_rnn", "attention_enc_self", "attention_dec_self", "attention_cross"},
     "Attention weights for one example, one panel per matrix (per layer and head for a "
     "model that has several). Each panel has its own colour scale, from 0 to its largest "
     "weight (printed above it), so a head that spreads its attention almost evenly still "
     "shows its pattern; the tables under a figure give every weight."},
    {"gates", {"gates"},
     "Gate activations (input, forget, output) and the cell state over the steps of one "
     "example, for the 8 units with the longest memory (the highest mean forget gate, "
     "sorted). The bars under them rank every unit by its mean forget gate: few units "
     "keep their memory."},
    {"cost", {"cost"},
     "Cost against length, log-log: the measured training time per sequence (one "
     "measurement per run and length, median over the runs) and the analytic FLOPs. The "
     "key gives the slope fitted to each model: near 1 the cost grows like L, near 2 like "
     "L squared (the grey guides show both). Attention adds a term in L squared, but at "
     "these lengths the per-token matrix products dominate, so read the measured slopes "
     "rather than assume L squared."},
};

/* The captions in Chinese, by script (the page in Chinese shows these). */
static const struct {
    const char *script, *caption;
} captions_zh[] = {
    {"accuracy",
     "逐词准确率和整序列准确率随序列长度的变化（各种子的平均值；色带：最小值到最大值）。"
     "灰色区域是训练长度范围；虚线是随机猜测的水平。比较每个模型的准确率如何随它需要"
     "携带每个符号的距离而变化，在训练范围之内和之外。如果一个模型的运行没有达到目标"
     "（摘要表的最后一列会写明，预算图也标出了被步数上限停止的运行），图中画的是它停止"
     "时的样子：它的下降属于一个被中途截断的运行，而不是这个模型的极限。"},
    {"positions",
     "几个长度下每个输出位置的准确率：每个模型沿着输出在哪个位置出错。同样要注意：对于"
     "没有达到目标的模型，它出错的位置是一个仍在学习的运行出错的位置。"},
    {"distance",
     "每个输出位置的准确率对它的间隔作图：从读入这个位置要重复的源符号到写出它之间的步数"
     "（只画训练范围内的长度，颜色表示长度；各种子的平均值）。在复制任务中，同一长度的每个"
     "位置间隔都相同，等于长度，所以距离和要存储的量一起增长；在反转任务中，同一长度内间隔"
     "从 1 到 2L-1，而要存储的量始终是 L。受距离限制的模型在每个长度上都沿着间隔同样地"
     "下降；受存储量限制的模型在相同间隔上随长度下降。"},
    {"bleu",
     "测试集的 BLEU-4 随源句长度的变化，每 5 个词一组（各种子的平均值，色带：最小值到最大值；"
     "图例给出每组在所有长度上的 BLEU），灰色区域是训练长度范围：即 Bahdanau 等人（2015）"
     "图 2 的形状。看没有注意力的模型是否随句子变长而下降，而有注意力的模型是否保持住，在训练"
     "范围之内和之外。只对从文件读入的任务（玩具翻译，或你自己的句对）才画。"},
    {"curves",
     "训练损失和教师强制下的逐词准确率随训练步数和秒数的变化（实线），以及留出验证集上的"
     "损失和贪心解码的逐词准确率（虚线）：每个模型按步数和按计算时间学得多快。训练损失下降"
     "而验证损失上升，就是过拟合。"},
    {"budget",
     "验证准确率随训练步数和秒数的变化（对数坐标；各种子的中位数，色带：最小值到最大值）："
     "最长训练长度上的整序列准确率，以及训练范围内的逐词准确率。两个模型之间的水平距离，"
     "就是达到同样准确率时一个模型需要多几倍的训练；提前停止的运行按它最后一次验证的结果"
     "延续。叉号标出被步数上限停止、没有达到目标的运行的最后一次验证；圆点是 budget_at.tsv "
     "的中位数（实心：在该步达到；空心：没有达到，多于该步）。"},
    {"capacity",
     "每个设置能复制多远与它的大小的关系：可达长度（到这个长度为止，每个长度的逐词准确率"
     "都不低于 99%；各种子的中位数，误差线：最小值到最大值）对参数数量作图，同一模型的不同"
     "设置连成一条线。只有当某个模型在几种大小下训练过时才画（compare --preset capacity）。"},
    {"attention",
     "一个例子的注意力权重，每个矩阵一个面板（有多层多头的模型按层和头分别画出）。每个"
     "面板有自己的颜色刻度，从 0 到它的最大权重（写在面板上方），所以一个几乎平均分配注意力"
     "的头也能显出它的模式；图下的表格给出每个权重。"},
    {"gates",
     "一个例子中门激活（输入门、遗忘门、输出门）和细胞状态随步数的变化，只画记忆最长的 8 "
     "个单元（平均遗忘门最高，已排序）。下方的条形图把所有单元按平均遗忘门排序：能保持"
     "记忆的单元很少。"},
    {"cost",
     "代价随长度的变化（双对数坐标）：实测的每个序列的训练时间（每次运行在每个长度上测一次，"
     "取各次运行的中位数）和解析计算的浮点运算数。图例给出每个模型拟合出的斜率：接近 1 表示"
     "代价随 L 线性增长，接近 2 表示随 L 的平方增长（灰色参考线画出这两种斜率）。注意力多出"
     "一个 L 平方的项，但在这些长度上每个词的矩阵乘法占主导，所以要看实测的斜率，而不要"
     "假定是 L 的平方。"},
};

/* The Chinese caption of script ("" when there is none). */
static const char *caption_zh(const char *script)
{
    for (size_t k = 0; k < sizeof captions_zh / sizeof captions_zh[0]; k++)
        if (strcmp(captions_zh[k].script, script) == 0)
            return captions_zh[k].caption;
    return "";
}
#define N_FIGURES (sizeof figures / sizeof figures[0])
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
        const struct figure *fig = &figures[k];
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
            drawn->fig[drawn->n].caption = fig->caption;
            drawn->fig[drawn->n].caption_zh = caption_zh(fig->script);
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
