/* report_page.c — a comparison's web page, report.html, in English or Chinese (see
 * report.h).
 *
 * Design. The page is one file a student can open anywhere and read alone: the figures
 * are inside it, as the PNG files gnuplot drew, base64 in data: URIs. PNG and not the
 * SVG, because an SVG heat map is a tiny embedded image (one pixel per cell) that the
 * browser enlarges and smooths, so the cells blur; the PNG's cells are blocks of pixels
 * already. Every figure shrinks to the width of the page, none scrolls sideways; heat
 * maps (attention, gates) keep sharp cells (image-rendering: pixelated). Each image is
 * one <figure> with its own numbered caption directly under it ("Figure 3.", 「图 3」),
 * chosen for the report's task and models (report_caption: no copy diagonal under a
 * task read from a file, no model that the report does not show). Under each attention
 * figure, the weights it shows are printed as tables (report_weights.c).
 *
 * Paper. The print style sheet (A4, report_style.c) keeps each figure with its caption
 * on one page and leaves out what only a screen can do: the tables of weights (folded
 * away, long) and every sentence about hovering sit in elements of class screen, hidden
 * in print; an element of class paper, shown only in print, says where the weights are.
 *
 * Words. Every sentence of the page exists in both languages, side by side in one
 * table of pairs (the captions of the figures are report_figures.c's). The figures of
 * the Chinese page have Chinese labels where a Chinese font is installed
 * (report_cjk_font), and the page says so once where they keep their English ones. The
 * Chinese page uses the terms of docs/zh/glossary.md: 逐词准确率 (token accuracy),
 * 整序列准确率 (sequence accuracy), 随机水平 (chance), 注意力, 编码器, 解码器.
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

report_lang report_get_lang(void) { return page_lang; }

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
    W_FIG_NOTE = {"", "这台机器上没有找到中文字体（fc-list :lang=zh 没有列出任何字体），所以图中"
                      "的坐标轴和图例仍为英文；每张图下方的说明为中文。安装中文字体（Debian："
                      "fonts-wqy-microhei）后再运行一次 attnlab report --lang zh，图中就会"
                      "是中文。"},
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
    W_FIGURE = {"Figure", "图"},

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
                "（最后一列写明是哪一种）：它们的准确率是被中途截断的模型的准确率，而不是这种"
                "结构能学到的水平。图中这类模型的准确率随长度下降，反映的是一个还在学习中的"
                "运行，不能当作关于这个模型的结论；budget_at.tsv 给出每个模型达到固定准确率"
                "所需的训练量，从未达到的运行记为多于它的最后一步。"};

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
/* The column column ("verdict", or "verdict_zh" in Chinese) of convergence.tsv for
 * group (NULL when it has none). */
static const char *verdict_of(const tsv *conv, const char *group, const char *column)
{
    const char *const need[] = {"model", column};
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
    size_t shorter = 0; /* the shortest length shown below the training range, or 0 */
    size_t span = 1;    /* the rows of the current model */
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
        const size_t L = strtoul(len, NULL, 10);
        if (L > 0 && L < fx->cfg->train_min && (!shorter || L < shorter))
            shorter = L;
        fputs("<td>", f);
        report_html_text(f, len);
        fprintf(f, "</td><td class=\"l\">%s</td>", role_of(L, fx->cfg));
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
        /* how the model's runs ended, in the words of convergence.tsv: its verdict_zh on
         * the Chinese page (a table written before it had one: the English) */
        const char *says = first && conv ? verdict_of(conv, group, "verdict") : NULL;
        const char *zh = first && conv && page_lang == REPORT_ZH
                             ? verdict_of(conv, group, "verdict_zh") : NULL;
        if (first && conv) {
            fprintf(f, "<td class=\"l\" rowspan=\"%zu\">", span);
            report_html_text(f, zh ? zh : says ? says : "");
            fputs("</td>", f);
        }
        /* any run short of its target: the cap ended it, or a plateau below the target */
        capped |= says && (strstr(says, "did not reach") || strstr(says, "plateau below"));
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (shorter) /* said where the page shows such a length (and in the accuracy figure's) */
        fprintf(f, page_lang == REPORT_ZH
                       ? "<p>短于 %zu 的长度（这里从 %zu 开始）比任何训练长度（%zu–%zu）都短："
                         "模型从未见过这些长度，所以在那里准确率低，和超出训练范围时一样，说明"
                         "模型没有把学到的东西用到没训练过的长度上。这不是记忆的问题，这么短的"
                         "序列几乎不考验记忆。</p>\n"
                       : "<p>Lengths below %zu (here from %zu) are shorter than any trained "
                         "length (%zu–%zu): the models never saw them, so a low accuracy "
                         "there, like one beyond the training range, shows a model that does "
                         "not carry what it learnt to an untrained length. It is not a lapse "
                         "of memory, which so short a sequence hardly tests.</p>\n",
                fx->cfg->train_min, shorter, fx->cfg->train_min, fx->cfg->train_max);
    if (capped)
        fprintf(f, "<p><strong>%s</strong></p>\n", T(W_CAPPED));
}

/* ---- the figures ---------------------------------------------------------------------- */

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
        const model_trace_kind *kind = report_trace_kind(fx, m, d->fig[k].name);
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
        if (report_trace_kind(fx, m, d->fig[k].name) != NULL)
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
        /* the caption with the notes that hold for this report, escaped as one text */
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (m) {
            report_caption(m, d->fig[k].from, report_scene_of(c->fx), page_lang == REPORT_ZH);
            fclose(m);
        }
        fputs(page_lang == REPORT_ZH ? "" : " ", f);
        report_html_text(f, text ? text : "");
        free(text);
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
    report_weights(f, c->out, c->fx, d->fig[k].name, page_lang == REPORT_ZH);
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
    if (page_lang == REPORT_ZH && d->n && !c->fx->label_font)
        fprintf(f, "<p>%s</p>\n", T(W_FIG_NOTE)); /* said once, here */
    /* one <figure> per image, numbered in the page's order; the outputs of one script
     * are consecutive and share a caption */
    for (size_t k = 0, first = 0; k < d->n; k++) {
        if (k == 0 || d->fig[k - 1].from != d->fig[k].from)
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
