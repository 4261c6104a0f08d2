/* cmd_measure.h — what the commands measure on a trained model and write into a run
 * (prefix: cmd_): the evaluation per length, the matrices of one example, the cost per
 * length. train runs all three at its end; eval and attention run one each.
 */
#ifndef ATTNLAB_CMD_MEASURE_H
#define ATTNLAB_CMD_MEASURE_H

#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "../core/model.h"
#include "../core/task.h"

/* Prints the n tokens x of task t (nsym data symbols) to f, separated by spaces: numbers,
 * or a file task's words. */
void cmd_print_tokens(FILE *f, const task *t, size_t nsym, const int *x, size_t n);

/* Evaluates m at the nl lengths lens, samples sequences each (evaluation seed seed); for
 * a file task, every example of its test set at those source lengths instead (samples
 * and seed unused). Prints the table when print is set and, when dir is not NULL,
 * writes eval.tsv and eval_positions.tsv into dir. Returns the exit status (the error
 * printed); when cmd_stop_signal is set during it, cmd_stopped_status() with nothing
 * printed or written, the caller saying what it had written before. */
int cmd_evaluate(model *m, const size_t *lens, size_t nl, size_t samples,
                 unsigned long seed, const char *dir, int print);

/* Scores how well m's attention maps find the source symbol each output repeats
 * (align.h) over samples sequences at each of the nl lengths (evaluation seed seed):
 * prints the table and, when dir is not NULL, writes eval_alignment.tsv into dir. A
 * model whose trace sends no map of outputs over the source says so and succeeds.
 * Returns the exit status (the error printed). */
int cmd_alignment(model *m, const size_t *lens, size_t nl, size_t samples,
                  unsigned long seed, const char *dir);

/* Sums the activation matrices of m (gates and cells: actstat.h) over samples
 * sequences at each of the nl lengths (evaluation seed seed): prints the table and, when
 * dir is not NULL, writes eval_activations.tsv into dir; weights ("trained" or
 * "untrained") is written in its weights column. A model that declares no activation
 * says so and succeeds. Returns the exit status (the error printed). */
int cmd_activations(model *m, const size_t *lens, size_t nl, size_t samples,
                    unsigned long seed, const char *dir, const char *weights);

/* Draws m's weights again exactly as train did before its first step (the run's seed,
 * the same stream): the untrained model of a checkpoint. Returns 0, or the exit status
 * after one line. */
int cmd_untrain(model *m);

/* The source lengths of the final evaluation of a file task t (its test set): with *nl
 * > 0, the nl lengths in lens (given by flag), each of which must hold test examples;
 * with *nl 0, every source length of the test set, written into lens (room for
 * ARGS_MAX_LENGTHS). Returns 0, or prints and returns the usage status. */
int cmd_data_lengths(const task *t, const char *flag, size_t *lens, size_t *nl);

/* What the final evaluation decodes, as one phrase into buf (n bytes): for a generated
 * task "2 lengths x 256 sequences" (nl lengths, samples sequences at each); for a file
 * task t, the examples of its test set at each of the nl source lengths lens, as many as
 * there are ("the 300 test examples: 203 of source length 3, 97 of length 4"). t may be
 * NULL (a generated task). */
void cmd_evaluation_plan(const task *t, const size_t *lens, size_t nl, size_t samples,
                         char *buf, size_t n);

/* Decodes src (Ts symbols) with m to Tt output symbols (0: the task's target length for
 * Ts, which for a file task is the longest target of a source of Ts words), then writes
 * every matrix the model traces as dir/NAME.tsv, printing the example and each matrix as
 * a table when print is set. Returns the exit status (the error printed). */
int cmd_write_trace(model *m, const int *src, size_t Ts, size_t Tt, const char *dir,
                    int print);

/* Measures the time of a training step and of decoding per sequence of m at the n lengths
 * lens (bench_cost; sequences drawn from r) with the analytic FLOPs, and writes
 * dir/cost.tsv (model len train_ms_per_seq flops_per_seq decode_ms_per_seq). Returns the
 * exit status. */
int cmd_measure_cost(model *m, const size_t *lens, size_t n, const gsl_rng *r,
                     const char *dir);

#endif
