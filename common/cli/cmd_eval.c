/* cmd_eval.c — attnlab eval: the accuracy of a checkpoint per length, or its answers to
 * your own input.
 *
 * Design. eval reads a checkpoint, so the model's settings come from the file and only
 * the evaluation's own flags (and --seed, --threads) are taken. The evaluation itself and
 * its files are cmd_evaluate's (cmd_measure.h), which train runs at its end too, so an
 * evaluation after training and one by eval write the same eval.tsv. --input decodes one
 * sequence per line of a file (or standard input) and prints each answer beside the
 * target the task expects.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "buildinfo.h"
#include "../core/checkpoint.h"
#include "cmd.h"
#include "cmd_files.h"
#include "cmd_measure.h"
#include "../core/config.h"
#include "../core/dataset.h"
#include "../core/infile.h"
#include "../core/model.h"
#include "runlock.h"
#include "../core/task.h"

/* Why eval --out refuses a run directory. */
#define EVAL_FILES "the run's own eval.tsv and eval_positions.tsv would be replaced"

void cmd_eval_help(void)
{
    printf(
        "Usage: attnlab eval --checkpoint FILE [--lengths SPEC] [--samples N] [--seed S]\n"
        "                    [--alignment] [--activations] [--untrained] [--out DIR]\n"
        "       attnlab eval --checkpoint FILE --input FILE\n"
        "\n"
        "Evaluates a trained model by greedy decoding: at each length it draws fresh\n"
        "sequences (from an evaluation stream that training never uses), lets the model\n"
        "decode them feeding back its own predictions, and reports token accuracy,\n"
        "whole-sequence accuracy and the teacher-forced loss. With --out it also writes\n"
        "eval.tsv and eval_positions.tsv (accuracy at each output position) into DIR,\n"
        "which must not hold a run of attnlab train: the run's own eval.tsv stays.\n"
        "\n"
        "  --checkpoint FILE  a model.ckpt written by attnlab train\n"
        "  --lengths SPEC     A:B:STEP, A:B or A,B,C (default 4:64:4, capped at max_len)\n"
        "  --samples N        sequences per length (default 512)\n"
        "  --seed S           evaluation seed (default: the training seed)\n"
        "  --input FILE       one source sequence per line (symbols separated by spaces;\n"
        "                     '-' reads standard input): prints the task's target, the\n"
        "                     greedy prediction and the teacher-forced mean loss\n"
        "  --alignment        also score the attention maps (copy and reverse): for each\n"
        "                     map of the outputs over the source (an alignment, or each\n"
        "                     head of a cross-attention),\n"
        "                     how often an output's largest weight is on the source\n"
        "                     symbol it repeats (argmax_acc) and the mean weight there,\n"
        "                     over the same sequences; with --out, eval_alignment.tsv\n"
        "  --activations      also sum the activations a model records (a recurrent\n"
        "                     cell's gates and states; copy and reverse) over the same\n"
        "                     sequences: per length and matrix their mean, how many\n"
        "                     are at or above 0.95 (share_hi) and at or below 0.05\n"
        "                     (share_lo), their range; with --out, eval_activations.tsv\n"
        "  --untrained        the same model as it was before its first training step\n"
        "                     (its weights drawn again from the run's seed): what\n"
        "                     training changed is the difference between the two\n"
        "  --threads N        BLAS threads\n"
        "\n"
        "A model trained on --task file:PATH reads that file again (it must not have\n"
        "changed: its CRC-32 is in the checkpoint) and is evaluated on every example of\n"
        "its test set, at each source length it holds (--lengths picks some; --samples\n"
        "does not apply). Its --input lines are words of the file's vocabulary; the\n"
        "target is shown when the file holds that source.\n"
        "\n"
        "Examples:\n"
        "  attnlab eval --checkpoint runs/%s/model.ckpt --lengths 4:64:4 --samples 512\n"
        "  echo '3 1 4 1 5 9 2 6' | attnlab eval --checkpoint runs/%s/model.ckpt --input -\n",
        model_registry[0]->name, model_registry[0]->name);
}

/* The longest --input line read: far beyond max_len symbols of 64 bytes each. A longer
 * line stops the reading with an error, so an endless line costs no more. */
#define INPUT_LINE_MAX (1 << 20)

/* attnlab eval --input: one sequence per line. Malformed lines are reported with their
 * number and skipped; the status is 1 when any line was malformed. A line is read whole
 * by its length, not as a C string, so a NUL byte in it is reported, never taken for
 * its end; a UTF-8 byte-order mark before the first line is skipped. A read error or
 * memory running out stops the reading with status 1, never as if the input had ended;
 * a FIFO or a directory given by name is refused (standard input, "-", may be a pipe). */
static int eval_input(model *m, const char *file)
{
    char err[ARGS_ERR_MAX];
    const task *t = task_open(&m->cfg, err, sizeof err);
    if (!t)
        return args_run_error("%s", err);
    FILE *in = infile_open(file, 1, err, sizeof err); /* "-", or a regular file */
    if (!in) {
        task_close(t);
        return args_run_error("--input: %s (accepted: a regular file, or - for standard "
                              "input)", err);
    }
    const size_t V = m->cfg.symbols, Lmax = m->cfg.max_len;
    const size_t Tmax = task_max_target_len(t, 1, Lmax);
    batch b;
    int *pred = malloc(Tmax * sizeof *pred);
    if (!pred || batch_alloc(&b, 1, Lmax, Tmax) != 0) {
        free(pred);
        if (in != stdin)
            fclose(in);
        task_close(t);
        return args_run_error("out of memory");
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, bad = 0;
    ssize_t got;
    int rc = 0;
    const char *name = in == stdin ? "standard input" : file;
    while ((got = infile_getline(&line, &cap, INPUT_LINE_MAX, in, name, err, sizeof err)) !=
           INFILE_END) {
        size_t Ts;
        lineno++;
        if (got == INFILE_FAIL) { /* never taken for the end of the input */
            rc = args_run_error("--input: %s (after %zu lines); nothing more was read", err,
                                lineno - 1);
            break;
        }
        if (got == INFILE_LONG) { /* an endless line would never end: stop */
            rc = args_run_error("--input %s line %zu: %s, more than a line of symbols "
                                "can be; nothing more was read", name, lineno, err);
            break;
        }
        char *text = line;
        if (lineno == 1 && (size_t)got >= 3 && memcmp(line, DATASET_BOM, 3) == 0) {
            text += 3; /* a UTF-8 byte-order mark, which some editors write first */
            got -= 3;
        }
        const char *nul = memchr(text, '\0', (size_t)got);
        if (nul) {
            fprintf(stderr, "%s: --input %s line %zu: a NUL byte at column %zu (accepted: "
                    "symbols separated by spaces)\n", args_command(), file, lineno,
                    (size_t)(nul - text) + 1);
            bad++;
            continue;
        }
        if (task_parse(t, V, text, b.src, Lmax, &Ts, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --input %s line %zu: %s\n", args_command(), file, lineno,
                    err);
            bad++;
            continue;
        }
        /* the target: the task's; for a file task the file's, when it holds this source */
        const long e = t->data ? dataset_find(t->data, b.src, Ts) : -1;
        const int known = !t->data || e >= 0;
        if (e >= 0) {
            const size_t idx = (size_t)e;
            task_fill_examples(t, &b, &idx, 1);
        } else {
            task_complete(t, &b, 1, Ts, V); /* a file task: only the shape is used */
        }
        if (m->ops->reserve(m, 1, Ts, b.Tt) != 0) {
            rc = args_run_error("out of memory");
            break;
        }
        if (model_decode(m, b.src, 1, Ts, b.Tt, pred) != 0) {
            rc = args_run_error("%s decode failed on --input line %zu: %s", m->ops->name,
                                lineno, model_last_error());
            break;
        }
        printf("line %zu\n  source:    ", lineno);
        cmd_print_tokens(stdout, t, V, b.src, Ts);
        if (!known) {
            printf("\n  target:    (none: no example of %s has this source)\n"
                   "  predicted: ", t->name);
            cmd_print_tokens(stdout, t, V, pred, b.Tt);
            printf("\n");
            continue;
        }
        double loss = model_forward(m, &b, NULL);
        if (isnan(loss) && model_last_error()[0]) {
            rc = args_run_error("%s forward failed on --input line %zu: %s", m->ops->name,
                                lineno, model_last_error());
            break;
        }
        size_t ok = 0;
        for (size_t i = 0; i < b.Tt; i++)
            ok += pred[i] == b.tgt[i];
        printf("\n  target:    ");
        cmd_print_tokens(stdout, t, V, b.tgt, b.Tt);
        printf("\n  predicted: ");
        cmd_print_tokens(stdout, t, V, pred, b.Tt);
        printf("   (%zu/%zu correct)\n  loss:      %.10g\n", ok, b.Tt, loss);
    }
    free(line);
    free(pred);
    batch_free(&b);
    if (in != stdin)
        fclose(in);
    task_close(t);
    if (rc == 0 && bad)
        rc = ARGS_EXIT_RUNTIME;
    return rc;
}

/* What an eval command line asks for (parse_eval). */
typedef struct eval_request {
    args_line a;
    size_t samples;
    config opt; /* --seed and --threads, read by the table's own rules */
    size_t lens[ARGS_MAX_LENGTHS];
    size_t nl;
} eval_request;

/* Reads and checks eval's command line into *q: everything the command refuses before it
 * loads the checkpoint. Returns 0, ARGS_HELP_SHOWN, or the exit status after the
 * message. */
static int parse_eval(int argc, char **argv, eval_request *q)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_LENGTHS, ARGS_SAMPLES,
                                        ARGS_OUT,        ARGS_INPUT,   ARGS_ALIGNMENT,
                                        ARGS_ACTIVATIONS, ARGS_UNTRAINED, 0};
    int rc = args_parse(argc, argv, 1, allowed, cmd_eval_help, &q->a);
    if (rc)
        return rc;
    /* of the settings, only these two make sense for a trained model */
    for (size_t k = 0; k < q->a.n_given; k++) {
        const char *name = config_fields[q->a.given[k]].name;
        if (strcmp(name, "seed") != 0 && strcmp(name, "threads") != 0)
            return args_usage_error("--%s is a training setting; eval takes it from the "
                                    "checkpoint (accepted here: --seed, --threads)", name);
    }
    if (!args_get(&q->a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    if (args_get(&q->a, ARGS_ALIGNMENT) && args_get(&q->a, ARGS_INPUT))
        return args_usage_error("--alignment scores a test set, --input decodes your lines: "
                                "give one of them");
    if (args_get(&q->a, ARGS_ACTIVATIONS) && args_get(&q->a, ARGS_INPUT))
        return args_usage_error("--activations sums a test set, --input decodes your lines: "
                                "give one of them");
    q->samples = 512;
    if (args_count(&q->a, ARGS_SAMPLES, 1, 1000000, &q->samples))
        return ARGS_EXIT_USAGE;
    const model_ops *none;
    const args_plan shared = {.shared = 1};
    if ((rc = args_config(&q->a, &shared, &q->opt, &none)))
        return rc;
    q->nl = 0;
    /* the model's max_len is checked by the evaluation once the model is loaded */
    if (args_lengths_of(&q->a, ARGS_LENGTHS, 4096, q->lens, &q->nl))
        return ARGS_EXIT_USAGE;
    return 0;
}

int cmd_eval_check(int argc, char **argv)
{
    static eval_request q;
    return args_exit(parse_eval(argc, argv, &q));
}

int cmd_eval(int argc, char **argv)
{
    static eval_request q;
    int rc = parse_eval(argc, argv, &q);
    if (rc)
        return args_exit(rc);
    const args_line *const a = &q.a;
    const char *ck = args_get(a, ARGS_CHECKPOINT);
    const size_t samples = q.samples;
    size_t *const lens = q.lens;
    size_t nl = q.nl;
    const config *const opt = &q.opt;
    char err[ARGS_ERR_MAX];
    buildinfo_set_threads(opt->threads);
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return args_run_error("%s", err);
    const unsigned long seed = args_setting(a, "seed") ? opt->seed : m->cfg.seed;
    const int untrained = args_get(a, ARGS_UNTRAINED) != NULL;
    if (untrained && (rc = cmd_untrain(m)) != 0) {
        m->ops->free(m);
        return rc;
    }
    runlock lock = {-1}; /* of --out, while eval writes there */
    if (args_get(a, ARGS_INPUT)) {
        rc = eval_input(m, args_get(a, ARGS_INPUT));
    } else if (task_is_file(m->cfg.task) && args_get(a, ARGS_ALIGNMENT)) {
        rc = args_usage_error("--alignment: the model was trained on %s, whose outputs do "
                              "not each repeat one source symbol (accepted: a model of copy "
                              "or reverse)", m->cfg.task);
    } else if (task_is_file(m->cfg.task) && args_get(a, ARGS_ACTIVATIONS)) {
        rc = args_usage_error("--activations: the model was trained on %s, whose sequences "
                              "are not drawn per length (accepted: a model of copy or "
                              "reverse)", m->cfg.task);
    } else if (task_is_file(m->cfg.task)) {
        /* a file task: its test set, at the lengths given or at all of its lengths */
        const task *t = task_open(&m->cfg, err, sizeof err);
        if (!t)
            rc = args_run_error("%s", err);
        else
            rc = cmd_data_lengths(t, "--lengths", lens, &nl);
        task_close(t);
        const char *dir = args_get(a, ARGS_OUT);
        if (rc == 0 && dir)
            rc = cmd_claim_out(&lock, dir, 2, EVAL_FILES);
        if (rc == 0)
            rc = cmd_evaluate(m, lens, nl, samples, seed, dir, 1);
    } else {
        if (nl == 0)
            for (size_t L = 4; L <= 64 && L <= m->cfg.max_len; L += 4)
                lens[nl++] = L;
        const char *dir = args_get(a, ARGS_OUT);
        if (dir)
            rc = cmd_claim_out(&lock, dir, 2, EVAL_FILES);
        if (rc == 0)
            rc = cmd_evaluate(m, lens, nl, samples, seed, dir, 1);
        if (rc == 0 && args_get(a, ARGS_ALIGNMENT))
            rc = cmd_alignment(m, lens, nl, samples, seed, dir);
        if (rc == 0 && args_get(a, ARGS_ACTIVATIONS))
            rc = cmd_activations(m, lens, nl, samples, seed, dir,
                                 untrained ? "untrained" : "trained");
    }
    runlock_release(&lock);
    m->ops->free(m);
    return rc;
}
