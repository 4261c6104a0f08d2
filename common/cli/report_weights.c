/* report_weights.c — the tables of weights under an attention figure of report.html
 * (see report_html.h).
 *
 * Design. Under each attention figure, the weights it shows are printed as tables, one
 * per matrix, each cell coloured like the figure (scaled to the matrix's largest weight,
 * as each panel is) and titled with its query, key and value: a screen shows the title
 * under the pointer. They are read from the trace copies report_copy_traces made, and a
 * matrix that does not read as numbers is left out. On paper the tables are left out
 * (they sit in an element of class screen); an element of class paper says where the
 * weights are. Every cell is escaped for HTML.
 */
#include "report_html.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"

const model_trace_kind *report_trace_kind(const report_facts *fx, size_t m, const char *name)
{
    const model_ops *ops = fx->ops ? fx->ops[m] : NULL;
    for (const model_trace_kind *k = ops ? ops->traces : NULL; k && k->prefix; k++)
        if (strcmp(k->figure, name) == 0)
            return k;
    return NULL;
}

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
static void write_matrix(FILE *f, const tsv *t, const char *name, int masked, int zh)
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
        fprintf(f, zh ? "第 %u 层，第 %u 个头" : "layer %u, head %u", l, h);
    fprintf(f, zh ? "（最大值 %.3f）</caption>\n<tr><th></th>"
                  : " (max %.3f)</caption>\n<tr><th></th>", max);
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
                fprintf(f, "<td class=\"x\" title=\"%s\"></td>",
                        zh ? "已被掩码遮住（之后的步）" : "masked: a later step");
                continue;
            }
            char hex[8];
            (void)tsv_number(t, r, c, &v, NULL, 0);
            const double frac = max > 0 ? v / max : 0;
            palette(frac, hex);
            fprintf(f, "<td style=\"background:%s%s\" title=\"%s ", hex,
                    frac > 0.55 ? ";color:#fff" : "", zh ? "查询" : "query");
            report_html_text(f, tsv_get(t, r, 0));
            fprintf(f, zh ? "（第 %zu 行）→ 键 " : " (row %zu) → key ", r + 1);
            report_html_text(f, t->cell[c]);
            fprintf(f, zh ? "（第 %zu 列）：%.4f\">%.2f</td>" : " (column %zu): %.4f\">%.2f</td>",
                    c, v, v);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_weights(FILE *f, const char *out, const report_facts *fx, const char *name, int zh)
{
    const char *group = NULL;
    const model_trace_kind *kind = NULL;
    for (size_t m = 0; !group && m < fx->n_models; m++)
        if ((kind = report_trace_kind(fx, m, name)) != NULL &&
            kind->what == MODEL_TRACE_ATTENTION)
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
        fputs(zh ? "<p class=\"paper\">打印版不含权重表格：请在屏幕上查看本页，或查看本页"
                   "旁边的文件 "
                 : "<p class=\"paper\">The tables of weights are left out on paper: see this "
                   "page on a screen, or the files beside it, ", f);
        report_html_text(f, rel);
        fprintf(f, "/*.tsv%s</p>\n<details class=\"screen\"><summary>%s</summary>\n"
                "<div class=\"vals\">\n", zh ? "。" : ".",
                zh ? "每个格子的权重（把鼠标停在格子上，可以看到它的查询和键）"
                   : "The weights of every cell (hover over a cell for its query and key)");
    }
    for (size_t i = 0; i < n; i++) {
        char path[AFILE_PATH_MAX], why[256];
        tsv t;
        if (afile_join(path, sizeof path, dir, names[i]) == 0 &&
            tsv_read(&t, path, why, sizeof why) == 0) {
            if (t.rows <= 64 && t.cols <= 65) {
                write_matrix(f, &t, names[i], kind->masked, zh);
            } else {
                fprintf(f, "<p>%s %s ", names[i],
                        zh ? "太大，不列成表；数值见" : "too large for a table; the values are in");
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
