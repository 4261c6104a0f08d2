/* report_page.c — a comparison's web page, report.html, in English or Chinese (see
 * report.h).
 *
 * Design. The page is one file a student can open anywhere and read alone: the figures
 * are inside it, as the PNG files gnuplot drew, base64 in data: URIs. PNG and not the
 * SVG, because an SVG heat map is a tiny embedded image (one pixel per cell) that the
 * browser enlarges and smooths, so the cells blur; the PNG's cells are blocks of pixels
 * already. Every figure shrinks to the width of the page, none scrolls sideways; heat
 * maps (attention, gates) keep sharp cells (image-rendering: pixelated). Each image is
 * one <figure> with its own numbered caption directly under it ("Figure 3.", 「图 3」).
 * Under each attention figure, the weights it shows are printed as tables, one per
 * matrix, each cell coloured like the figure and titled with its query, key and value
 * (a screen shows the title under the pointer), read from the trace copies
 * report_copy_traces made.
 *
 * Paper. The print style sheet (A4, report_style.c) keeps each figure with its caption
 * on one page and leaves out what only a screen can do: the tables of weights (folded
 * away, long) and every sentence about hovering sit in elements of class screen, hidden
 * in print; an element of class paper, shown only in print, says where the weights are.
 *
 * Words. Every sentence of the page exists in both languages, side by side in one
 * table of pairs (the captions of the figures are report_draw.c's); the figures keep
 * their English labels. The Chinese page uses one set of terms: 逐词准确率 (token
 * accuracy), 整序列准确率 (sequence accuracy), 注意力, 编码器, 解码器.
 *
 * Nothing here trusts a file: every cell shown is escaped for HTML, and a table or
 * matrix that does not read as expected is left out (the manifest with a line on
 * stderr) rather than shown half.
 */
#include "report.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/afile.h"
#include "report_html.h"
#include "rundir.h"
#include "../core/task.h"
#include "../core/tsv.h"

/* ---- the language ------------------------------------------------------------------- */

static report_lang page_lang = REPORT_EN;

int report_lang_parse(const char *code, report_lang *lang)
{
    if (strcmp(code, "en") == 0)
        *lang = REPORT_EN;
    else if (strcmp(code, "zh") == 0)
        *lang = REPORT_ZH;
    else
        return -1;
    return 0;
}

void report_set_lang(report_lang lang) { page_lang = lang; }

const char *report_page_name(void)
{
    return page_lang == REPORT_ZH ? "report.zh.html" : "report.html";
}

/* One sentence in both languages; T picks the one of the page. */
typedef struct words {
    const char *en, *zh;
} words;
#define T(w) (page_lang == REPORT_ZH ? (w).zh : (w).en)

static const words
    W_SUMMARY = {"Summary", "摘要"},
    W_FIGURES = {"Figures", "图"},
    W_MANIFEST = {"Manifest", "清单"},
    W_MANIFEST_P = {"How these results were made: the command, the build, the machine.",
                    "这些结果是如何得到的：命令、构建和机器。"},
    W_FIG_NOTE = {"", "图中的坐标轴和图例为英文；每张图下方的说明为中文。"},
    W_LENGTHS = {"Lengths shown: the shortest evaluated, the longest trained, twice that, "
                 "and the longest evaluated (every length is in accuracy.tsv and in the "
                 "first figure). Accuracy is the mean over seeds ± its standard deviation (none for "
                 "one seed).",
                 "表中的长度：评估过的最短长度、训练过的最长长度、它的两倍，以及评估过的"
                 "最长长度（所有长度见 accuracy.tsv 和第一张图）。准确率为各种子的平均值 ± "
                 "标准差（只有一个种子时不给出）。"},
    W_MODEL = {"model", "模型"},
    W_PARAMS = {"parameters", "参数量"},
    W_SEEDS = {"seeds (runs)", "种子数（运行次数）"},
    W_TIME = {"training time (s, mean over seeds)", "训练时间（秒，各种子平均）"},
    W_LEN = {"length L", "长度 L"},
    W_ROLE = {"which length", "这个长度是"},
    W_TOKEN = {"token accuracy", "逐词准确率"},
    W_SEQ = {"sequence accuracy", "整序列准确率"},
    W_SHORTER = {"shorter than any trained length", "比所有训练长度都短"},
    W_INSIDE = {"inside the training range", "在训练范围之内"},
    W_LONGEST = {"the longest trained length", "训练过的最长长度"},
    W_BEYOND = {"beyond the training range: never trained", "超出训练范围：从未训练过"},
    W_VALUES = {"The weights of every cell (hover over a cell for its query and key)",
                "每个格子的权重（鼠标停在格子上可看到它的查询和键）"},
    W_VALUES_PAPER = {"The tables of weights are left out on paper: see this page on a "
                      "screen, or the files beside it,",
                      "纸上不印权重表格：请在屏幕上查看本页，或查看它旁边的文件"},
    W_FIGURE = {"Figure", "图"},

    W_QUERY = {"query", "查询"},
    W_KEY = {"key", "键"},
    W_ROW = {"row", "行"},
    W_COL = {"column", "列"},
    W_MASKED = {"masked: a later step", "被掩码：之后的步"},
    W_TOO_BIG = {"too large for a table; the values are in", "太大，不列成表；数值见"},
    W_ENDED = {"how its runs ended (convergence.tsv)", "运行如何结束（convergence.tsv）"},
    W_CAPPED = {"Some runs stopped before they reached the target, at the cap or at a "
                "plateau below it (the last column says which): their accuracies are those "
                "of models cut short, "
                "not of what their architecture can learn. Read such a model's fall with "
                "length in the figures as the state of a run still learning, not as a "
                "finding about the model; budget_at.tsv gives the training each model "
                "needed for fixed accuracies, a run that never got there counted as "
                "more than its last step.",
                "有些运行在达到目标之前就停止了，或是到了步数上限，或是停在低于目标的平台上"
                "（最后一列写明是哪些）：它们的准确率"
                "是被中途截断的模型的准确率，而不是这种结构能学到的水平。图中这样的模型随"
                "长度下降，应读作一个仍在学习的运行的状态，而不是关于这个模型的结论；"
                "budget_at.tsv 给出每个模型达到固定准确率所需的训练量，从未达到的运行记为"
                "多于它的最后一步。"};

/* The kind of matrix that the trace of group m of fx sends to figure name (the first,
 * when several do), or NULL: what a model's ops say it traces. */
static const model_trace_kind *trace_kind(const report_facts *fx, size_t m, const char *name)
{
    const model_ops *ops = fx->ops ? fx->ops[m] : NULL;
    for (const model_trace_kind *k = ops ? ops->traces : NULL; k && k->prefix; k++)
        if (strcmp(k->figure, name) == 0)
            return k;
    return NULL;
}

/* ---- the title and the summary -------------------------------------------------------- */

/* The heading and the paragraph under it, fitted to the models shown: a model that
 * carries the source in one state beside one that attends makes the page the question
 * of the toolkit, named after the first such model (its ops' title). */
static void write_intro(FILE *f, const report_facts *fx)
{
    const model_ops *plain = NULL;
    int attn = 0;
    for (size_t m = 0; m < fx->n_models; m++) {
        const model_ops *ops = fx->ops ? fx->ops[m] : NULL;
        attn |= ops && ops->attends;
        if (ops && !ops->attends && !plain)
            plain = ops;
    }
    const config *c = fx->cfg;
    /* the task as a word: a file task by its file's name ("dates"), escaped for HTML */
    char name[CONFIG_TASK_MAX], *task_word = NULL;
    size_t len = 0;
    task_short_name(c->task, name, sizeof name);
    FILE *tf = open_memstream(&task_word, &len);
    if (!tf)
        return;
    report_html_text(tf, name);
    fclose(tf);
    fputs("<h1>", f);
    if (plain && attn) {
        fputs(page_lang == REPORT_ZH ? "为什么注意力取代了 " : "Why attention replaced the ", f);
        report_html_text(f, plain->title ? plain->title : plain->name);
        if (page_lang == REPORT_ZH)
            fprintf(f, "：%s 任务上的 %zu 个模型", task_word, fx->n_models);
        else
            fprintf(f, ": %zu models on the %s task", fx->n_models, task_word);
    } else {
        for (size_t m = 0; m < fx->n_models; m++) {
            fputs(m ? ", " : "", f);
            report_html_group(f, fx->models[m]);
        }
        fprintf(f, page_lang == REPORT_ZH ? "：%s 任务" : " on the %s task", task_word);
    }
    fputs("</h1>\n<p>", f);
    const int file = task_is_file(c->task);
    if (page_lang == REPORT_ZH && file)
        fprintf(f, "任务 %s（你自己的数据，%s），%zu 个数据符号（随机猜对的概率 1/%zu），训练长度 "
                "%zu–%zu；每个模型最多 %zu 个种子。准确率用贪心解码在测试集的每个例子上测得，"
                "按源序列长度列出。", task_word, c->task + strlen(TASK_FILE_PREFIX), c->symbols,
                c->symbols, c->train_min, c->train_max, fx->seeds);
    else if (file)
        fprintf(f, "Task %s (your own data, %s) with %zu data symbols (chance: 1/%zu), "
                "trained on lengths %zu–%zu; up to %zu seed(s) per model. Accuracy is "
                "measured by greedy decoding on every example of the test set, by source "
                "length.", task_word, c->task + strlen(TASK_FILE_PREFIX), c->symbols,
                c->symbols, c->train_min, c->train_max, fx->seeds);
    else if (page_lang == REPORT_ZH)
        fprintf(f, "任务 %s，%zu 个数据符号（随机猜对的概率 1/%zu），训练长度 %zu–%zu；每个模型"
                "最多 %zu 个种子。准确率用贪心解码在新生成的序列上测得，覆盖训练范围之内和之外"
                "的每个评估长度。", task_word, c->symbols, c->symbols, c->train_min,
                c->train_max, fx->seeds);
    else
        fprintf(f, "Task %s with %zu data symbols (chance: 1/%zu), trained on lengths "
                "%zu–%zu; up to %zu seed(s) per model. Accuracy is measured by greedy "
                "decoding on fresh sequences at every evaluated length, inside the training "
                "range and beyond it.", task_word, c->symbols, c->symbols, c->train_min,
                c->train_max, fx->seeds);
    fputs("</p>\n", f);
    free(task_word);
}

/* What length L is to the training range of c. */
static const char *role_of(size_t L, const config *c)
{
    return L < c->train_min    ? T(W_SHORTER)
           : L == c->train_max ? T(W_LONGEST)
           : L < c->train_max  ? T(W_INSIDE)
                               : T(W_BEYOND);
}

/* summary.tsv with named columns: a model's settings once (rowspan), then one row per
 * length with what that length is and accuracy as mean ± sd. A summary without the
 * expected columns is shown as it is. */
/* The verdict column of convergence.tsv for group (NULL when it has none). */
static const char *verdict_of(const tsv *conv, const char *group)
{
    static const char *const need[] = {"model", "verdict"};
    long at[2];
    char why[256];
    if (!conv || tsv_require(conv, need, at, 2, why, sizeof why) != 0)
        return NULL;
    for (size_t r = 0; r < conv->rows; r++)
        if (strcmp(tsv_get(conv, r, (size_t)at[0]), group) == 0)
            return tsv_get(conv, r, (size_t)at[1]);
    return NULL;
}

static void write_summary(FILE *f, const tsv *t, const report_facts *fx, const tsv *conv)
{
    static const char *const need[] = {"model",  "params",     "seeds",    "train_seconds_mean",
                                       "len",    "token_mean", "token_sd", "seq_mean",
                                       "seq_sd"};
    enum { MODEL, PARAMS, SEEDS, SECS, LEN, TOK, TOK_SD, SEQ, SEQ_SD, N_NEED };
    long at[N_NEED];
    char why[256];
    if (tsv_require(t, need, at, N_NEED, why, sizeof why) != 0) {
        report_html_table(f, t);
        return;
    }
    fprintf(f, "<p>%s</p>\n<div class=\"sum\"><table>\n<tr>", T(W_LENGTHS));
    const words *heads[] = {&W_MODEL, &W_PARAMS, &W_SEEDS, &W_TIME, &W_LEN,
                            &W_ROLE,  &W_TOKEN,  &W_SEQ,   &W_ENDED};
    const size_t nh = sizeof heads / sizeof heads[0] - (conv ? 0 : 1);
    for (size_t h = 0; h < nh; h++)
        fprintf(f, "<th>%s</th>", T(*heads[h]));
    fputs("</tr>\n", f);
    int capped = 0;
    size_t span = 1; /* the rows of the current model */
    for (size_t r = 0; r < t->rows; r++) {
        const char *group = tsv_get(t, r, (size_t)at[MODEL]);
        const int first = r == 0 || strcmp(tsv_get(t, r - 1, (size_t)at[MODEL]), group) != 0;
        fputs("<tr>", f);
        if (first) {
            span = 1;
            while (r + span < t->rows &&
                   strcmp(tsv_get(t, r + span, (size_t)at[MODEL]), group) == 0)
                span++;
            fprintf(f, "<th class=\"m\" rowspan=\"%zu\">", span);
            report_html_group(f, group);
            fputs("</th>", f);
            for (int k = PARAMS; k <= SECS; k++) {
                fprintf(f, "<td rowspan=\"%zu\">", span);
                report_html_text(f, tsv_get(t, r, (size_t)at[k]));
                fputs("</td>", f);
            }
        }
        const char *len = tsv_get(t, r, (size_t)at[LEN]);
        fputs("<td>", f);
        report_html_text(f, len);
        fprintf(f, "</td><td class=\"l\">%s</td>", role_of(strtoul(len, NULL, 10), fx->cfg));
        /* one seed has no spread: its sd (0) is not shown */
        const int spread = strcmp(tsv_get(t, r, (size_t)at[SEEDS]), "1") != 0;
        for (int k = TOK; k <= SEQ; k += 2) {
            fputs("<td>", f);
            report_html_text(f, tsv_get(t, r, (size_t)at[k]));
            if (spread) {
                fputs(" ± ", f);
                report_html_text(f, tsv_get(t, r, (size_t)at[k + 1]));
            }
            fputs("</td>", f);
        }
        /* how the model's runs ended, in the words of convergence.tsv (English) */
        const char *says = first && conv ? verdict_of(conv, group) : NULL;
        if (first && conv) {
            fprintf(f, "<td class=\"l\" rowspan=\"%zu\">", span);
            report_html_text(f, says ? says : "");
            fputs("</td>", f);
        }
        /* any run short of its target: the cap ended it, or a plateau below the target */
        capped |= says && (strstr(says, "did not reach") || strstr(says, "plateau below"));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (capped)
        fprintf(f, "<p><strong>%s</strong></p>\n", T(W_CAPPED));
}

/* ---- the figures ---------------------------------------------------------------------- */

/* Orders trace names by layer and head as numbers ("x.l0.h2" before "x.l0.h10"). */
static int cmp_trace(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    unsigned lx = 0, hx = 0, ly = 0, hy = 0;
    const char *px = strstr(x, ".l"), *py = strstr(y, ".l");
    if (px && py && sscanf(px, ".l%u.h%u", &lx, &hx) == 2 &&
        sscanf(py, ".l%u.h%u", &ly, &hy) == 2 && (lx != ly || hx != hy))
        return lx != ly ? (lx > ly) - (lx < ly) : (hx > hy) - (hx < hy);
    return strcmp(x, y);
}

/* The colour of weight fraction v (0..1) on the figures' palette, as #RRGGBB. */
static void palette(double v, char hex[8])
{
    static const double at[] = {0, 0.15, 0.4, 0.7, 1};
    static const unsigned rgb[] = {0xF0F5FB, 0xDEEBF7, 0x9ECAE1, 0x3182BD, 0x08306B};
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    size_t k = 0;
    while (k < 3 && v > at[k + 1])
        k++;
    const double w = (v - at[k]) / (at[k + 1] - at[k]);
    unsigned c = 0;
    for (int s = 16; s >= 0; s -= 8) {
        const double lo = (rgb[k] >> s) & 255, hi = (rgb[k + 1] >> s) & 255;
        c |= (unsigned)(lo + w * (hi - lo) + 0.5) << s;
    }
    snprintf(hex, 8, "#%06X", c & 0xFFFFFF);
}

/* One matrix as a table of coloured cells (scaled to its largest weight, as in the
 * figure), each titled with its query, key and value. masked: keys after the query are
 * hidden by the causal mask. */
static void write_matrix(FILE *f, const tsv *t, const char *name, int masked)
{
    unsigned l, h;
    const char *lh = strstr(name, ".l");
    double max = 0, v;
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 1; c < t->cols; c++)
            if (tsv_number(t, r, c, &v, NULL, 0) != 0)
                return;
            else if (v > max)
                max = v;
    fputs("<table class=\"att\"><caption>", f);
    if (lh && sscanf(lh, ".l%u.h%u", &l, &h) == 2)
        fprintf(f, page_lang == REPORT_ZH ? "第 %u 层，第 %u 个头" : "layer %u, head %u", l, h);
    fprintf(f, " (max %.3f)</caption>\n<tr><th></th>", max);
    for (size_t c = 1; c < t->cols; c++) {
        fputs("<th>", f);
        report_html_text(f, t->cell[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t r = 0; r < t->rows; r++) {
        fputs("<tr><th>", f);
        report_html_text(f, tsv_get(t, r, 0));
        fputs("</th>", f);
        for (size_t c = 1; c < t->cols; c++) {
            if (masked && c - 1 > r) {
                fprintf(f, "<td class=\"x\" title=\"%s\"></td>", T(W_MASKED));
                continue;
            }
            char hex[8];
            (void)tsv_number(t, r, c, &v, NULL, 0);
            const double frac = max > 0 ? v / max : 0;
            palette(frac, hex);
            fprintf(f, "<td style=\"background:%s%s\" title=\"%s ", hex,
                    frac > 0.55 ? ";color:#fff" : "", T(W_QUERY));
            report_html_text(f, tsv_get(t, r, 0));
            fprintf(f, " (%s %zu) → %s ", T(W_ROW), r + 1, T(W_KEY));
            report_html_text(f, t->cell[c]);
            fprintf(f, " (%s %zu): %.4f\">%.2f</td>", T(W_COL), c, v, v);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Under attention figure name: the tables of the matrices it was drawn from (the first
 * group of fx whose model's trace sends attention maps to it, as plots/attention.gp
 * chooses), found by the prefix of their kind. */
static void write_values(FILE *f, const char *out, const report_facts *fx, const char *name)
{
    const char *group = NULL;
    const model_trace_kind *kind = NULL;
    for (size_t m = 0; !group && m < fx->n_models; m++)
        if ((kind = trace_kind(fx, m, name)) != NULL && kind->what == MODEL_TRACE_ATTENTION)
            group = fx->models[m];
    char dir[AFILE_PATH_MAX], rel[AFILE_PATH_MAX];
    const int fits = group && snprintf(rel, sizeof rel, "trace/%s", group) < (int)sizeof rel;
    DIR *d = fits && afile_join(dir, sizeof dir, out, rel) == 0 ? opendir(dir) : NULL;
    if (!d)
        return;
    /* every matrix of the figure, however many layers and heads: the list grows */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, kind->prefix, strlen(kind->prefix)) != 0 || l < 5 ||
            strcmp(e->d_name + l - 4, ".tsv") != 0)
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
            if (!grown)
                break; /* out of memory: the tables found so far */
            names = grown;
        }
        if ((names[n] = strdup(e->d_name)) != NULL)
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_trace);
    if (n) {
        fprintf(f, "<p class=\"paper\">%s ", T(W_VALUES_PAPER));
        report_html_text(f, rel);
        fprintf(f, "/*.tsv%s</p>\n<details class=\"screen\"><summary>%s</summary>\n"
                "<div class=\"vals\">\n", page_lang == REPORT_ZH ? "。" : ".", T(W_VALUES));
    }
    for (size_t i = 0; i < n; i++) {
        char path[AFILE_PATH_MAX], why[256];
        tsv t;
        if (afile_join(path, sizeof path, dir, names[i]) == 0 &&
            tsv_read(&t, path, why, sizeof why) == 0) {
            if (t.rows <= 64 && t.cols <= 65) {
                write_matrix(f, &t, names[i], kind->masked);
            } else {
                fprintf(f, "<p>%s %s ", names[i], T(W_TOO_BIG));
                report_html_text(f, rel);
                fprintf(f, "/%s</p>\n", names[i]);
            }
            tsv_free(&t);
        }
        free(names[i]);
    }
    if (n)
        fputs("</div></details>\n", f);
    free(names);
}

/* ---- the page ------------------------------------------------------------------------- */

typedef struct page_ctx {
    const char *out;
    const report_facts *fx;
    const report_drawn *drawn;
    const tsv *summary;  /* NULL when unreadable */
    const tsv *manifest; /* NULL when absent or not shown */
    const tsv *convergence; /* NULL when absent or not shown */
} page_ctx;

/* After the caption of figure k of d: the sentence each model whose trace feeds it adds
 * (its kind's about), each once, in the order of the groups. */
static void write_kind_captions(FILE *f, const report_facts *fx, const report_drawn *d,
                                size_t k)
{
    const char *said[16];
    size_t n_said = 0;
    for (size_t m = 0; m < fx->n_models; m++) {
        const model_trace_kind *kind = trace_kind(fx, m, d->fig[k].name);
        const char *about = !kind ? NULL : page_lang == REPORT_ZH ? kind->about_zh
                                                                  : kind->about;
        size_t i = 0;
        while (about && i < n_said && said[i] != about)
            i++;
        if (!about || i < n_said || n_said == sizeof said / sizeof said[0])
            continue;
        said[n_said++] = about;
        fputs(page_lang == REPORT_ZH ? "" : " ", f);
        report_html_text(f, about);
    }
}

/* Does some model's trace feed figure k of d (a sentence of its own to say)? */
static int has_kind_caption(const report_facts *fx, const report_drawn *d, size_t k)
{
    for (size_t m = 0; m < fx->n_models; m++)
        if (trace_kind(fx, m, d->fig[k].name) != NULL)
            return 1;
    return 0;
}

/* Figure k of d as one <figure>: the image, then directly under it its caption, numbered
 * number. The outputs of one script share a caption (first: the first of them): the
 * first figure of a script holds it whole; each later one, where a model's trace says
 * what it shows, holds that sentence and sends the reader to the first, else the whole
 * caption again. The tables of weights follow the figure, outside it. */
static void write_figure(FILE *f, const page_ctx *c, size_t k, size_t first, size_t number)
{
    const report_drawn *d = c->drawn;
    const int heat = has_kind_caption(c->fx, d, k); /* a heat map: a trace feeds it */
    fputs("<figure>\n", f);
    report_html_image(f, c->out, d->fig[k].name, d->fig[k].name, heat);
    /* the number, then (the kinds' sentences lead with a space in English) the words */
    fprintf(f, page_lang == REPORT_ZH ? "<figcaption><strong>%s %zu</strong>　"
                                      : "<figcaption><strong>%s %zu.</strong>",
            T(W_FIGURE), number);
    if (k == first || !has_kind_caption(c->fx, d, k)) {
        fputs(page_lang == REPORT_ZH ? "" : " ", f);
        report_html_text(f, page_lang == REPORT_ZH ? d->fig[k].caption_zh : d->fig[k].caption);
        write_kind_captions(f, c->fx, d, k);
    } else {
        write_kind_captions(f, c->fx, d, k);
        if (page_lang == REPORT_ZH)
            fprintf(f, "读法同图 %zu：那里的说明也适用于这张图。", number - (k - first));
        else
            fprintf(f, " Read it as figure %zu: the caption there holds for this figure too.",
                    number - (k - first));
    }
    fputs("</figcaption>\n</figure>\n", f);
    write_values(f, c->out, c->fx, d->fig[k].name);
}

/* The self-contained page: the summary, the figures as PNG, the manifest. */
static int write_page(FILE *f, const void *p)
{
    const page_ctx *c = p;
    const report_drawn *d = c->drawn;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n",
            page_lang == REPORT_ZH ? "zh-CN" : "en",
            page_lang == REPORT_ZH ? "attnlab 对比报告" : "attnlab comparison", report_style);
    write_intro(f, c->fx);
    fprintf(f, "<h2>%s</h2>\n", T(W_SUMMARY));
    if (c->summary)
        write_summary(f, c->summary, c->fx, c->convergence);
    fprintf(f, "<h2>%s</h2>\n", T(W_FIGURES));
    if (page_lang == REPORT_ZH && d->n)
        fprintf(f, "<p>%s</p>\n", T(W_FIG_NOTE));
    /* one <figure> per image, numbered in the page's order; the outputs of one script
     * are consecutive and share a caption */
    for (size_t k = 0, first = 0; k < d->n; k++) {
        if (k == 0 || d->fig[k - 1].caption != d->fig[k].caption)
            first = k;
        write_figure(f, c, k, first, k + 1);
    }
    if (c->manifest) {
        fprintf(f, "<h2>%s</h2>\n<p>%s</p>\n", T(W_MANIFEST), T(W_MANIFEST_P));
        fputs("<div class=\"man\">\n", f);
        report_html_table(f, c->manifest);
        fputs("</div>\n", f);
    }
    fputs("</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* Reads out/name for the page: 0 when it is shown (t filled), -1 when it is not (a line
 * on stderr says why, unless the file is absent and quiet_absent). */
static int page_table(const char *out, const char *name, int quiet_absent, tsv *t)
{
    char path[AFILE_PATH_MAX], why[512], a[AFILE_PATH_MAX], b[1024];
    if (afile_join(path, sizeof path, out, name) != 0)
        return -1;
    if (quiet_absent && access(path, F_OK) != 0)
        return -1;
    if (tsv_read(t, path, why, sizeof why) != 0) {
        fprintf(stderr, "attnlab report: %s shows no %s: %s\n", report_page_name(), name,
                rundir_printable(why, b, sizeof b));
        return -1;
    }
    for (size_t i = 0; i < (t->rows + 1) * t->cols; i++)
        if (!rundir_is_text(t->cell[i], NULL)) {
            fprintf(stderr, "attnlab report: %s shows no %s: %s line %zu holds a "
                    "control character or a byte that is not UTF-8\n", report_page_name(),
                    name, rundir_printable(path, a, sizeof a), i / t->cols + 1);
            tsv_free(t);
            return -1;
        }
    return 0;
}

int report_write_page(const char *out, const report_facts *fx, const report_drawn *drawn,
                      char *err, size_t n)
{
    tsv summary, manifest, conv;
    const int has_summary = page_table(out, "summary.tsv", 0, &summary) == 0;
    const int has_manifest = page_table(out, "manifest.tsv", 1, &manifest) == 0;
    const int has_conv = page_table(out, "convergence.tsv", 1, &conv) == 0;
    page_ctx pc = {out, fx, drawn, has_summary ? &summary : NULL,
                   has_manifest ? &manifest : NULL, has_conv ? &conv : NULL};
    int rc = afile_write(out, report_page_name(), write_page, &pc, err, n);
    if (has_conv)
        tsv_free(&conv);
    if (has_summary)
        tsv_free(&summary);
    if (has_manifest)
        tsv_free(&manifest);
    return rc;
}
