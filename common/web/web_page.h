/* web_page.h — what the browser page calls in its Worker: runs made, trained a chunk at
 * a time, finished, evaluated, decoded, opened from a checkpoint (prefix: page_).
 *
 * A run is a handle (1 or more) and a directory of emscripten's in-memory file system
 * holding the command line's files (docs/results-format.md). Strings are UTF-8. A function
 * that fails returns 0 (a handle) or -1 and leaves one line in page_error(); nothing
 * is written half. web_page.c says how the bits stay those of `attnlab train`.
 */
#ifndef ATTNLAB_WEB_PAGE_H
#define ATTNLAB_WEB_PAGE_H

/* Installs the handler that turns a model's GSL report into an error value (call once). */
void page_init(void);

/* The one-line reason the last call failed ("" after a success). */
const char *page_error(void);

/* The text of the last page_decode or page_config. */
const char *page_text(void);

/* The models of the registry, one name per line. */
const char *page_models(void);

/* The settings of size preset "small" for model name ("" for "defaults": the command
 * line's own sizes). */
const char *page_preset(const char *name, const char *preset);

/* Makes a run in dir from settings, key=value words (model, task, train_min, train_max,
 * sizes, seed, steps, stop_acc, log_every, ... as config.h names them; eval_lengths=A,B,..
 * and samples=N for the final evaluation), initialised from its seed, and writes
 * dir/args.txt and dir/config.tsv. Returns the handle, or 0. */
int page_create(const char *dir, const char *settings);

/* Trains run h at least steps more steps, then to the next step that validates (or less,
 * at the cap or when the stopping rule fires), and writes dir/train_log.tsv. Returns 0:
 * more to train; 1: training is over; -1: failed (a divergence; training is over). */
int page_train(int h, int steps);

/* Ends the training of run h and writes train_log.tsv, last.ckpt, model.ckpt (the best
 * validation's weights, which the run keeps) and build.tsv. Returns 0 or -1. */
int page_finish(int h);

/* Evaluates run h at its evaluation lengths and writes eval.tsv and eval_positions.tsv.
 * Returns 0 or -1. */
int page_evaluate(int h);

/* Opens the checkpoint at path as a run in dir, to evaluate and decode (settings:
 * eval_lengths and samples, or ""); writes dir/config.tsv. Returns the handle, or 0. */
int page_open(const char *path, const char *dir, const char *settings);

/* Puts "key<TAB>value" lines of run h's configuration in page_text() (parameters first).
 * Returns 0 or -1. */
int page_config(int h);

/* Decodes input (a line of the task's symbols), writes the model's trace of it as
 * dir/trace/NAME.tsv and "decoded", "target", "correct" lines in page_text(). Returns 0 or
 * -1. */
int page_decode(int h, const char *input);

/* Merges the finished runs in the directories runs (one path a line) into the comparison
 * directory out, with the command line's own writers (common/cli/summary.h,
 * summary_merge): curves.tsv, accuracy.tsv, positions.tsv and the other tables, the
 * copies of each run's trace/ as out/trace/MODEL/ with their trace_vars.gp, and
 * figure_vars.gp, which the figure scripts plots/NAME.gp read; a run that is not finished
 * (no eval.tsv) is skipped with a line on stderr. Returns 0, or -1 when no run could be
 * read or a file could not be written (web_compare.c, as the three below). */
int page_compare(const char *runs, const char *out);

/* The same for runs still training (summary_merge_training): from their config.tsv and
 * train_log.tsv so far, writes out/curves.tsv and out/figure_vars.gp, what
 * plots/curves.gp reads, so the page draws the training curves while the runs train.
 * Returns 0, or -1. */
int page_curves(const char *runs, const char *out);

/* Writes into out the run directory page_compare reads of run h, opened from a
 * checkpoint and evaluated: a copy of its config.tsv, eval.tsv, eval_positions.tsv and
 * trace/, a build.tsv giving its parameters alone and a train_log.tsv without a row (a
 * checkpoint holds no training). Returns 0, or -1 (a run trained here: its directory is
 * read as it is). */
int page_stage(int h, const char *out);

/* The figures the page draws and their captions, as the command's report.html shows them
 * (common/cli/report_figures.c), one TAB-separated line each:
 *     figure  SCRIPT  OUTPUT OUTPUT...  CAPTION  CAPTION_ZH
 * then, for each kind of matrix a model's trace sends that adds a sentence to its
 * figure's caption (model_trace_kind's about):
 *     trace   MODEL   FIGURE  ABOUT  ABOUT_ZH */
const char *page_figures(void);

/* Closes run h (its files stay). Returns 0 or -1. */
int page_close(int h);

#endif
