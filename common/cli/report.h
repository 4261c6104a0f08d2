/* report.h — results for people and for plotting: labelled matrices, and a comparison's
 * figures and web page (prefix: report_).
 *
 * Matrices (attention maps, gate activations) are written by the core
 * (common/core/tracefile.h) as TSV with a header row of column labels and a label at the
 * start of each row; here they are printed for people (report_print_matrix).
 *
 * A comparison directory (docs/results-format.md), once summary_report has written its
 * tables, gets from here, in this order:
 *     trace/NAME/X.tsv   the matrices of the first run of each model (report_copy_traces)
 *     trace/NAME/trace_vars.gp  their labels and numbers as gnuplot variables
 *                        (report_write_trace_vars, called by report_copy_traces)
 *     figure_vars.gp     the facts the figure scripts load (report_write_vars)
 *     task.txt           the task's name, one line of text (report_write_vars)
 *     figures/F.png .svg drawn by gnuplot running each plots/F.gp (report_draw)
 *     report.html        the summary table, the figures this report drew inline as PNG,
 *                        the manifest (report_write_page, report_page.c); in Chinese,
 *                        report.zh.html instead (report_set_lang)
 * Nothing here chooses what to draw by model: the figure scripts find out what they can
 * draw from the files they read (a model that wrote no trace has no trace figure), and
 * the page shows the figures that were drawn. The page names models only for its title
 * and to find the trace folder whose weights it prints under an attention figure.
 *
 * gnuplot runs code: whatever reaches it as a command is a program. So nothing read from
 * a file or typed as a path reaches it that way (report_draw.c, design block, says how).
 */
#ifndef ATTNLAB_REPORT_H
#define ATTNLAB_REPORT_H

#include <gsl/gsl_matrix.h>
#include <stddef.h>
#include <stdio.h>

#include "../core/config.h"
#include "../core/model.h"

/* Prints m as an aligned table with labels, 3 decimals (for the terminal). Wide matrices
 * are printed whole: a terminal scrolls, a teacher wants every column. */
void report_print_matrix(FILE *f, const char *title, const gsl_matrix *m,
                         const char (*rows)[16], const char (*cols)[16]);

/* What the figures of a comparison depend on, gathered by summary_report. */
typedef struct report_facts {
    const config *cfg;         /* the first run's settings: task, symbols, training range */
    size_t n_models;           /* models (groups of runs) in the tables */
    const char *const *models; /* (n_models) their names, in the tables' order: letters,
                                  digits and _.:=,+- only (report_write_vars refuses more) */
    const char *const *runs;   /* (n_models) the run directory whose trace/ each shows */
    const model_ops *const *ops; /* (n_models) each one's model: what its trace sends and
                                    whether it attends (NULL: none registered by its name) */
    const char *const *labels; /* (n_models) the names a paper gives them ("RNNsearch-50"),
                                  else their names; the same characters as models */
    const size_t *trained_to;  /* (n_models) each one's longest training length */
    const size_t *kin;         /* (n_models) the first model of the same setup but for the
                                  training lengths (an index; itself when none is before) */
    const size_t *capped;      /* (n_models) its runs the step cap ended short of their
                                  target (censored) */
    size_t seeds;              /* the most runs any model has */
    const size_t *position_lengths; /* (n_position_lengths) lengths the positions */
    size_t n_position_lengths;      /* figure shows */
    int have_cost; /* some run measured its cost (train --cost-lengths wrote cost.tsv) */
    int have_val;  /* some run logged validations (train_log.tsv's val_ columns) */
    int have_sweep; /* some model has several setups (capacity.tsv: setups > 1) */
    int have_distance; /* some model's task has a gap per position (distance.tsv) */
    int have_bleu;     /* some run has BLEU counts (eval_bleu.tsv: a file task) */
    int have_lrsweep;  /* some model was trained at several rates (sweep.tsv) */
    size_t shortest;   /* the shortest length evaluated (0: not known) */
    /* The font family of the figures' Chinese labels (report_cjk_font), or NULL: the
     * figures keep their English labels (report_write_vars writes none). */
    const char *label_font;
} report_facts;

/* What a caption depends on: the task and the models the figures show. Sentences true of
 * one task only (a diagonal in copy) or of a set of models only (the model without
 * attention beside the one with it) are said where they hold and nowhere else. */
enum {
    REPORT_COPY = 1,    /* task copy */
    REPORT_REVERSE = 2, /* task reverse */
    REPORT_FILE = 4,    /* a task read from a file (--task file:PATH) */
    REPORT_OTHER = 8,   /* any other generated task */
    REPORT_ONE = 16,     /* one model (one group of runs) */
    REPORT_SEVERAL = 32, /* several models */
    REPORT_CONTRAST = 64, /* a model without attention beside one with it */
    REPORT_NO_CONTRAST = 128, /* no such pair: one model, or models alike */
    REPORT_SHORTER = 256, /* lengths shorter than any trained length were evaluated */
};

/* One sentence of a caption and when it holds: every bit of `when` must be among those of
 * the scene (report_scene_of); when = 0, always. */
typedef struct report_note {
    unsigned when;
    const char *en, *zh;
} report_note;

/* One figure script (plots/SCRIPT.gp): the figures it draws and the sentences shown under
 * them, "what to look for", in English and in Chinese: the caption, true of every task
 * and any set of models, then the notes whose conditions the report meets. */
typedef struct report_figure {
    const char *script;     /* plots/NAME.gp */
    const char *outputs[4]; /* figures it draws (without extension), NULL after the last */
    const char *caption;
    const char *caption_zh;
    report_note notes[6]; /* those used first, then {0, NULL, NULL} */
} report_figure;

/* Every figure script, in the order reports run and show them (report_figures.c): the one
 * list of captions, read by the command's page and by the browser page. */
#define REPORT_N_FIGURES 11
extern const report_figure report_figures[REPORT_N_FIGURES];

/* The scene of a report: the REPORT_ bits of its task and of the models of fx, and
 * REPORT_SHORTER when fx->shortest is below the training range. */
unsigned report_scene_of(const report_facts *fx);

/* Writes the caption of fig for scene (report_scene_of) on f, in Chinese when zh: the
 * caption, then each note that holds, separated by a space in English. Plain text (the
 * caller escapes it for HTML: write it into a buffer first). */
void report_caption(FILE *f, const report_figure *fig, unsigned scene, int zh);

/* The figures one report drew, in the order the page shows them. */
#define REPORT_MAX_FIGURES 44 /* 4 outputs for each of 11 scripts (report_draw.c checks it) */
typedef struct report_drawn {
    size_t n;
    struct {
        const char *name;       /* figures/NAME.png and NAME.svg */
        const report_figure *from; /* the script that drew it: its caption, shared by
                                      the outputs of one script */
    } fig[REPORT_MAX_FIGURES];
} report_drawn;

/* The languages the page is written in: its headings, captions and table heads, and the
 * labels of its figures where a Chinese font is installed (report_cjk_font). */
typedef enum { REPORT_EN, REPORT_ZH } report_lang;
#define REPORT_LANGS "en, zh" /* what --lang accepts, for messages */

/* Reads a language code ("en" or "zh") into *lang. Returns 0, or -1 for anything else. */
int report_lang_parse(const char *code, report_lang *lang);

/* Chooses the language of the pages this process writes (REPORT_EN until called). One
 * report runs per process, so this is a setting of the program, like a flag. */
void report_set_lang(report_lang lang);

/* The language report_set_lang chose. */
report_lang report_get_lang(void);

/* The file report_write_page writes in the language chosen: "report.html" in English,
 * "report.zh.html" in Chinese (so a comparison can hold both). */
const char *report_page_name(void);

/* Checks, before a report writes anything into out, that the folders it writes into or
 * empties there — figures/, trace/ and trace/NAME/ for each model — are real
 * directories or absent, never symbolic links (safedir.h). Returns 0, or -1 with one
 * line in err naming the first that is not. */
int report_check_out(const char *out, const report_facts *fx, char *err, size_t n);

/* The family of a font that draws Chinese, as fontconfig names it (`fc-list :lang=zh`:
 * "WenQuanYi Micro Hei", "Noto Sans CJK SC", "PingFang SC"), into buf (n bytes); a
 * Regular sans face before a monospaced one. Returns 0, or -1 when none is installed,
 * fc-list is missing, or the name holds a character figure_vars.gp does not take. */
int report_cjk_font(char *buf, size_t n);

/* The Chinese words of the figures: each plots/NAME.gp says a label as tr("KEY",
 * "English"), which is the value of zh_KEY when figure_vars.gp defines it and the English
 * otherwise (report_labels.c). Ended by {NULL, NULL}. */
typedef struct report_label {
    const char *key;
    const char *zh;
} report_label;
extern const report_label report_labels_zh[];

/* Writes the Chinese labels to f as gnuplot assignments, zh_KEY = "...", and
 * label_font = "FONT" (FONT as report_cjk_font found it). */
void report_write_labels(FILE *f, const char *font);

/* Writes out/figure_vars.gp, which every figure script loads: numbers (training range,
 * symbols, seeds), the model names and position lengths as strings of letters, digits
 * and _.:=,+- between double quotes (anything else is refused), the task's name as any
 * text in single quotes ('' for a quote, a control character as '?'), and traced, the
 * models whose out/trace/NAME/trace_vars.gp exists (so call it after
 * report_copy_traces): a script cannot ask whether a file exists without a shell; per
 * model, in the order of models, labels (fx->labels), trained_to, kin (1-based) and
 * capped, each a space-separated string (kept out when fx->labels is NULL); with
 * fx->label_font, the figures' Chinese labels (report_write_labels). Then out/task.txt:
 * the task's name as one line of text. Returns 0, or -1 with one line in err (n bytes). */
int report_write_vars(const char *out, const report_facts *fx, char *err, size_t n);

/* Copies the TSV files of RUN/trace/ into out/trace/NAME/ for each model NAME and its
 * run RUN, after removing the copies an earlier report left there and the folders of
 * out/trace/ of models this report does not show, so no figure is drawn from another
 * report's runs. A run without a trace is fine: its figures are then skipped. A trace
 * file whose name or content is malformed (not a labelled matrix of numbers, labels that
 * are not text) is left out with one line on stderr. Nothing is removed or written
 * through a symbolic link (safedir.h). Returns 0, or -1 with one line in err when a copy
 * cannot be written or removed. */
int report_copy_traces(const char *out, const report_facts *fx, char *err, size_t n);

/* Writes dir/trace_vars.gp from the labelled matrices dir/X.tsv (names of letters,
 * digits and _.-): for each, its labels as single-quoted gnuplot strings and its numbers
 * as a datablock, under the stem tr_X (report.c, write_matrix_vars, lists them), so the
 * figure scripts read a trace without a shell and never parse a label. A file that is
 * not a labelled matrix gets no variables. report_copy_traces calls it for each copy;
 * attnlab attention and train --trace for the folder they write. Returns 0, or -1 with
 * one line in err (n bytes). */
int report_write_trace_vars(const char *dir, char *err, size_t n);

/* Draws every figure into out/figures/ by running gnuplot on each script of
 * report_plots_dir() (the cost figure only when fx->have_cost, budget only when
 * fx->have_val, capacity only when fx->have_sweep, distance only when
 * fx->have_distance, bleu only when fx->have_bleu, sweep only when fx->have_lrsweep). Each figure is written to a temporary folder first and moved into out/figures/ only when gnuplot succeeded and
 * both files are complete (a PNG that ends with its IEND chunk, an SVG that ends with
 * </svg>); otherwise the figure already there stays as it was. Fills drawn with the
 * figures moved into place and prints them on f. When gnuplot or the scripts are
 * missing, one line on stderr says how to draw the figures later; that is not a
 * failure. Returns 0, or -1 when a figure failed (one line on stderr names each, and err
 * says what to do) or out/figures/ cannot be created. */
int report_draw(const char *out, const report_facts *fx, report_drawn *drawn, FILE *f,
                char *err, size_t n);

/* Writes out/report_page_name(), one self-contained page in the chosen language: a title
 * that fits the models of fx, out/summary.tsv as a table with named columns and the
 * meaning of each length, the figures of drawn as PNG images inside the page (data:
 * URIs; each shrinks to the page's width, heat maps kept sharp with image-rendering:
 * pixelated), each a <figure> with its numbered caption directly under it,
 * under each attention figure the weights of its cells as tables (each cell's title
 * names its query and key), and out/manifest.tsv when there is one and every cell of it
 * is text (otherwise one line on stderr says why it is left out). Returns 0, or -1 with
 * one line in err. */
int report_write_page(const char *out, const report_facts *fx, const report_drawn *drawn,
                      char *err, size_t n);

/* The directory holding the figure scripts (plots/NAME.gp): $ATTNLAB_PLOTS, or found
 * next to the program (the source tree, or the installed share directory). NULL when
 * none is found. */
const char *report_plots_dir(void);

#endif
