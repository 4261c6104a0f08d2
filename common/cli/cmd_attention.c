/* cmd_attention.c — attnlab attention: what a trained model looked at for one example
 * (attention weights, or the gates of a model without attention), printed and written as tables.
 *
 * Design. attention reads a checkpoint and one --input sequence in the symbols of the
 * model's task, then hands both to cmd_write_trace (cmd_measure.h), which train uses
 * for its --trace too. The matrices go into trace/ beside the checkpoint unless --out
 * says otherwise; a run's trace/ is written under the run's lock, as train writes it.
 * With --len N instead of --input, the example is the first sentence of N source words
 * of the test set of the model's file task (the test set is sorted by length, then by
 * each sentence's hash: dataset.h), so a long test sentence's map is one command that
 * names the same sentence for every run of that file.
 * --untrained draws the weights again from the run's seed exactly as train did before
 * its first step (cmd_train.c: rng_open, then the model's init from RNG_INIT), so the
 * trained and the untrained model can be set side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/afile.h"
#include "args.h"
#include "../core/checkpoint.h"
#include "../core/dataset.h"
#include "cmd.h"
#include "cmd_files.h"
#include "cmd_measure.h"
#include "../core/model.h"
#include "runlock.h"
#include "safedir.h"
#include "../core/task.h"

void cmd_attention_help(void)
{
    printf(
        "Usage: attnlab attention --checkpoint FILE --input \"3 1 4 1 5 9 2 6\" [--out DIR]\n"
        "                         [--untrained]\n"
        "       attnlab attention --checkpoint FILE --len N [--out DIR] [--untrained]\n"
        "\n"
        "Decodes one source sequence greedily and prints the matrices its model records:\n"
        "attention maps (row t: where output t looked), or for a model without attention\n"
        "its gates and cell state over the steps. What each model records (the names of\n"
        "its matrices, and the figure of a report drawn from them):\n");
    for (size_t k = 0; model_registry[k]; k++) {
        const model_trace_kind *t = model_registry[k]->traces;
        printf("  %-14s", model_registry[k]->name);
        for (size_t i = 0; t && t[i].prefix; i++)
            printf("%s%s* (%s)", i ? ",\n                 " : " ", t[i].prefix, t[i].figure);
        printf("%s\n", t && t[0].prefix ? "" : " nothing");
    }
    printf(
        "Each matrix is also written as DIR/NAME.tsv (default DIR: trace/ beside the\n"
        "checkpoint), labelled with tokens, and all of them as DIR/trace_vars.gp, ready\n"
        "for the scripts of plots/, which draw into DIR/figures/. A model trained\n"
        "on --task file:PATH takes words of that file's vocabulary (\"3 march 2021\"), and\n"
        "its matrices are labelled with them. A DIR that holds a run of attnlab train is\n"
        "refused (give its trace/ folder); a run's trace/ is written under the run's lock.\n"
        "\n"
        "  --len N      instead of --input, for a model trained on --task file:PATH:\n"
        "               the first sentence of N source words of the file's test set\n"
        "               (the same sentence for every run of that file), printed with\n"
        "               its reference and decoded to the reference's length, as the\n"
        "               evaluation decodes it (an --input example: to the longest\n"
        "               target of a source of its length)\n"
        "  --untrained  the same model as it was before its first training step (its\n"
        "               weights drawn again from the run's seed, bit for bit those training\n"
        "               started from): what training changed, e.g. in the gates, is the\n"
        "               difference between the two. Needs --out, so that the trained\n"
        "               model's matrices in trace/ stay.\n"
        "\n"
        "Examples:\n"
        "  attnlab attention --checkpoint runs/attn/model.ckpt --input \"3 1 4 1 5 9 2 6\"\n"
        "  attnlab attention --checkpoint runs/search/model.ckpt --len 45 --out maps/45\n");
}

/* Reads and checks attention's command line into *a: --checkpoint and --input given
 * (the symbols of --input are read once the model, and so its task, is loaded). Returns
 * 0, ARGS_HELP_SHOWN, or the exit status after the message. */
static int parse_attention(int argc, char **argv, args_line *a)
{
    static const args_flag allowed[] = {ARGS_CHECKPOINT, ARGS_INPUT, ARGS_LEN, ARGS_OUT,
                                        ARGS_UNTRAINED, 0};
    const int rc = args_parse(argc, argv, 0, allowed, cmd_attention_help, a);
    if (rc)
        return rc;
    if (!args_get(a, ARGS_CHECKPOINT))
        return args_usage_error("--checkpoint FILE is required");
    if (!args_get(a, ARGS_INPUT) && !args_get(a, ARGS_LEN))
        return args_usage_error("--input \"SYMBOLS\" is required (e.g. --input \"3 1 4 1 5\"), "
                                "or --len N for a test sentence of a file task");
    if (args_get(a, ARGS_INPUT) && args_get(a, ARGS_LEN))
        return args_usage_error("--input and --len both name the example (accepted: one of "
                                "them)");
    if (args_get(a, ARGS_UNTRAINED) && !args_get(a, ARGS_OUT))
        return args_usage_error("--untrained needs --out DIR (the trained model's matrices in "
                                "trace/ stay as they are)");
    return 0;
}

int cmd_attention_check(int argc, char **argv)
{
    static args_line a;
    return args_exit(parse_attention(argc, argv, &a));
}

/* Takes the lock that guards dir, where attention writes its matrices (AFILE_PATH_MAX
 * bytes; rewritten as the path entered). When dir is the trace/ folder of a run
 * directory RUN (the default, trace/ beside the checkpoint), it is the run's: RUN's lock
 * is taken, as train holds it while it writes that folder, and RUN/trace must be a real
 * directory, not a symbolic link (safedir.h). Any other dir takes its own lock, and one
 * holding a run is refused: the matrices go into its trace/ folder or beside it. Returns
 * 0 with l held, or the exit status after one line. */
static int claim_trace_dir(char *dir, runlock *l)
{
    char run[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    const char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    l->fd = -1;
    snprintf(run, sizeof run, "%.*s", slash ? (int)(slash - dir) + (slash == dir) : 1,
             slash ? dir : ".");
    if (strcmp(base, "trace") != 0 || !cmd_holds_run(run))
        return cmd_claim_out(l, dir, 1, "its matrices go into its trace/ folder (--out "
                             "RUN/trace) or beside the run");
    const int rc = runlock_take(l, run, err, sizeof err);
    if (rc != 0)
        return args_run_error(rc == RUNLOCK_IN_USE ? "%s; wait for it to end, or choose "
                              "another --out" : "--out: %s", err);
    if (safedir_enter(run, "trace", dir, AFILE_PATH_MAX, err, sizeof err) != 0) {
        runlock_release(l);
        return args_run_error("%s", err);
    }
    return 0;
}

/* Copies into src (room for max) the first sentence of N source words of the test set
 * of file task t, *Ts = N and *Tt = its reference's length (what it is decoded to, as
 * the evaluation decodes it), and prints it with its reference on stderr. Returns 0, or
 * the exit status after one line: t is not a file task, or its test set has no sentence
 * of N words (the line names the lengths it has). */
static int test_sentence(const task *t, size_t N, int *src, size_t max, size_t *Ts,
                         size_t *Tt)
{
    const dataset *d = t->data;
    if (!d)
        return args_usage_error("--len: the model was trained on %s, which has no test set "
                                "of sentences (accepted: a model of --task file:PATH; give "
                                "--input for a generated task)", t->name);
    const dataset_range *r = &d->set[DATASET_TEST];
    size_t lo = 0, hi = 0;
    for (size_t i = r->first; i < r->first + r->count; i++) {
        const dataset_example *e = &d->ex[i];
        if (e->Ts == N && N <= max) {
            memcpy(src, e->src, N * sizeof *src);
            *Ts = N;
            *Tt = e->Tt;
            fprintf(stderr, "the first test sentence of %zu words (line %zu of the file):\n"
                    "  source:   ", N, e->line);
            for (size_t k = 0; k < e->Ts; k++)
                fprintf(stderr, k ? " %s" : "%s", d->words[e->src[k]]);
            fputs("\n  reference:", stderr);
            for (size_t k = 0; k < e->Tt; k++)
                fprintf(stderr, " %s", d->words[e->tgt[k]]);
            fputc('\n', stderr);
            return 0;
        }
        lo = lo == 0 || e->Ts < lo ? e->Ts : lo;
        hi = e->Ts > hi ? e->Ts : hi;
    }
    return args_usage_error("--len: the test set has no sentence of %zu source words "
                            "(accepted: a length from %zu to %zu that it holds)", N, lo, hi);
}

int cmd_attention(int argc, char **argv)
{
    static args_line a;
    int rc = parse_attention(argc, argv, &a);
    if (rc)
        return args_exit(rc);
    const char *ck = args_get(&a, ARGS_CHECKPOINT), *input = args_get(&a, ARGS_INPUT);
    char err[ARGS_ERR_MAX], dir[AFILE_PATH_MAX]; /* --out: at most ARGS_PATH_MAX */
    model *m = ckpt_load(ck, NULL, err, sizeof err);
    if (!m)
        return args_run_error("%s", err);
    if (args_get(&a, ARGS_UNTRAINED) && (rc = cmd_untrain(m)) != 0) {
        /* the draws train made before its first step: the same seed, the same stream */
        m->ops->free(m);
        return rc;
    }
    int *src = malloc(m->cfg.max_len * sizeof *src);
    size_t Ts = 0, Tt = 0, len = 0; /* Tt 0: the task's length (an --input example) */
    const task *t = NULL;
    if (!src) {
        rc = args_run_error("out of memory");
    } else if (!(t = task_open(&m->cfg, err, sizeof err))) {
        rc = args_run_error("%s", err);
    } else if (!input && (args_count(&a, ARGS_LEN, 1, m->cfg.max_len, &len) != 0 ||
                          (rc = test_sentence(t, len, src, m->cfg.max_len, &Ts, &Tt)) != 0)) {
        rc = rc ? rc : ARGS_EXIT_USAGE;
    } else if (input && task_parse(t, m->cfg.symbols, input, src, m->cfg.max_len, &Ts, err,
                                   sizeof err) != 0) {
        rc = args_usage_error("--input: %s", err);
    } else {
        if (args_get(&a, ARGS_OUT)) {
            snprintf(dir, sizeof dir, "%s", args_get(&a, ARGS_OUT));
        } else {
            const char *slash = strrchr(ck, '/');
            snprintf(dir, sizeof dir, "%.*s/trace", slash ? (int)(slash - ck) : 1,
                     slash ? ck : ".");
        }
        runlock lock = {-1};
        rc = claim_trace_dir(dir, &lock);
        if (rc == 0)
            rc = cmd_write_trace(m, src, Ts, Tt, dir, 1);
        if (rc == 0) { /* after the tables, also when both streams go to one file */
            fflush(stdout);
            fprintf(stderr, "wrote the matrices above as %s/NAME.tsv\n", dir);
        }
        runlock_release(&lock);
    }
    task_close(t);
    free(src);
    m->ops->free(m);
    return rc;
}
