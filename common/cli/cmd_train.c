/* cmd_train.c — attnlab train: one model, one task, one run directory; periodic
 * checkpoints, a clean stop on SIGINT/SIGTERM, and --resume.
 *
 * Design. A run is decided entirely by its command line: parse_train turns it into a
 * train_job (configuration, evaluation lengths, trace, directory), and the arguments are
 * kept as DIR/args.txt, so --resume DIR parses the very same command again and takes
 * nothing else from the user but --quiet and --threads. Every checkpoint_every steps the
 * run saves DIR/checkpoint.ckpt (weights, Adam's moments, the three random streams) and
 * the whole training log, which lives in memory and is written in one piece; the files of
 * a checkpoint are written under temporary names and renamed into place only when all
 * are whole, checkpoint.ckpt last (trainfiles_save), so the log on disk always reaches the
 * step of the checkpoint beside it, and a full disk leaves the previous set as it was. A resumed run continues
 * from that step with exactly the state an uninterrupted run would have had there: its
 * final weights are the same bytes.
 *
 * The files of a run, in the order written: args.txt, config.tsv, (checkpoint.ckpt and
 * train_log.tsv during training), train_log.tsv, model.ckpt, build.tsv, trace/, cost.tsv,
 * and eval.tsv with eval_positions.tsv last: eval.tsv marks a finished run (compare
 * skips it, --resume refuses it). A stop signal during the final evaluation ends it
 * without eval.tsv; the message gives the attnlab eval command that writes it. Before the first of them, the run takes the lock of
 * its directory and checks what the directory already holds (traindir.h); the lock
 * is held until the process ends.
 *
 * A run started by compare also watches compare: when compare is gone (killed, even by
 * SIGKILL, which it cannot pass on), the run stops as on SIGTERM, with its state saved,
 * instead of writing on with nobody waiting for it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../core/afile.h"
#include "buildinfo.h"
#include "../core/checkpoint.h"
#include "args.h"
#include "cmd.h"
#include "cmd_files.h"
#include "cmd_measure.h"
#include "cmd_stop.h"
#include "traindir.h"
#include "trainfiles.h"
#include "../core/config.h"
#include "../core/eval.h"
#include "../core/model.h"
#include "progress.h"
#include "../core/rng.h"
#include "runlock.h"
#include "safedir.h"
#include "../core/task.h"
#include "../core/train.h"

/* Symbols a --trace example may hold. */
#define TRACE_MAX 4096

void cmd_train_help(void)
{
    printf(
        "Usage: attnlab train [--model NAME] [--task NAME] [--train-len MIN:MAX] [--steps N]\n"
        "                     [--batch N] [--lr X] [--seed S] [--out DIR] [SETTINGS...]\n"
        "\n"
        "Trains one model on one task and writes into DIR (default results/MODEL-TASK-sSEED):\n"
        "  config.tsv           every setting of the run (the same keys as the flags)\n"
        "  build.tsv            version, compiler, flags, BLAS in use, parameter count, time\n"
        "  train_log.tsv        step seconds lr loss token_acc seq_acc grad_norm seq_per_s\n"
        "                       val_loss val_token_acc val_seq_acc val_seq_acc_max\n"
        "  model.ckpt           the trained weights (docs/checkpoint-format.md)\n"
        "  eval.tsv             greedy-decoding accuracy per length (see attnlab eval)\n"
        "  eval_positions.tsv   accuracy per output position at each length\n"
        "\n"
        "Run options:\n"
        "  --train-len MIN:MAX  training lengths, one drawn per batch (or one length N)\n"
        "  --eval-lengths SPEC  final evaluation lengths, A:B:STEP or A,B,C\n"
        "                       (default: up to twice the longest training length; for\n"
        "                       --task file:PATH, every source length of its test set)\n"
        "  --samples N          sequences per evaluation length (default 256; file:PATH\n"
        "                       evaluates each test example once)\n"
        "  --trace \"SYMBOLS\"    also write the attention maps (or gates) of this example\n"
        "                       into DIR/trace/ (see attnlab attention)\n"
        "  --cost-lengths SPEC  also measure the time of a training step and of decoding\n"
        "                       per sequence at these lengths into DIR/cost.tsv\n"
        "  --out DIR            run directory (created when missing); one writer at a time:\n"
        "                       a directory in use by another run is refused\n"
        "  --force              replace the finished or stopped run DIR holds (refused\n"
        "                       without it)\n"
        "  --quiet              print nothing but errors (no progress, no table)\n"
        "  --resume DIR         continue the stopped run in DIR from its checkpoint.ckpt\n"
        "                       (its settings come from DIR; only --quiet, --threads)\n"
        "\n"
        "A flag given twice keeps its last value, and only when every value given is valid.\n"
        "Numbers are decimal: digits for counts and sizes (128), and for real settings\n"
        "also a minus sign, a point and an exponent (0.001, -2.5, 1e-3); no spaces, no\n"
        "hexadecimal, no inf or nan. A path given to a flag never starts with '-'\n"
        "(write ./-name).\n"
        "\n"
        "Your own data: --task file:PATH reads one example a line, SOURCE<TAB>TARGET, each\n"
        "a list of words separated by spaces (blank lines and comments, lines whose first\n"
        "character is '#', are skipped and counted; a UTF-8 byte-order mark too). The\n"
        "vocabulary (--symbols) and --data-crc come from the file, --train-len (unless\n"
        "given) from its training set; the examples are split once, by a hash of their\n"
        "text, into training (80%%), validation (10%%) and test (10%%) sets\n"
        "(docs/results-format.md, docs/labs/08-your-own-data.md).\n"
        "\n"
        "Settings (each also a key of config.tsv), with their defaults; every model reads\n"
        "the sizes it needs and ignores the others:\n");
    /* the defaults of every field: the sizes of each model come from its own defaults();
     * a model whose recipe sets a field otherwise (its own rate) is named beside it */
    config d;
    config_defaults(&d);
    for (size_t k = 0; k < config_n_fields; k++) {
        char flag[64], value[64], own[256] = "";
        config_flag_name(&config_fields[k], flag, sizeof flag);
        if (config_fields[k].type == CFG_BOOL)
            snprintf(value, sizeof value, "off");
        else
            config_format(&d, &config_fields[k], value, sizeof value);
        for (size_t m = 0; model_registry[m] && config_fields[k].type != CFG_BOOL; m++) {
            config c;
            char v[64];
            config_defaults(&c);
            model_registry[m]->defaults(&c);
            config_format(&c, &config_fields[k], v, sizeof v);
            if (strcmp(v, value) != 0 && strlen(own) + strlen(v) + 40 < sizeof own)
                snprintf(own + strlen(own), sizeof own - strlen(own), "; %s %s",
                         model_registry[m]->name, v);
        }
        printf("  --%-18s %s (default %s%s)\n", flag, config_fields[k].help, value, own);
    }
    /* examples from the registry: the first model, then the first that attends */
    const char *first = model_registry[0]->name, *attn = first;
    for (size_t m = 0; model_registry[m]; m++)
        if (model_registry[m]->attends) {
            attn = model_registry[m]->name;
            break;
        }
    printf("\nModels: %s.  Tasks: %s.\n"
           "\nExamples:\n"
           "  attnlab train --model %s --task copy --train-len 4:8 --steps 3000 --out runs/%s\n"
           "  attnlab train --model %s --hidden 256 --forget-bias 0 --seed 2 --out runs/fb0\n"
           "  attnlab train --model %s --task file:docs/labs/data/dates.tsv --out runs/dates\n",
           model_names(), task_names(), first, first, first, attn);
}

/* ---- the command line of a run ------------------------------------------------------------ */

/* Everything a train command decided before training: kept so --resume can rebuild it. */
typedef struct train_job {
    config c;
    const model_ops *ops;
    size_t lens[ARGS_MAX_LENGTHS], nl, samples;  /* the final evaluation */
    size_t cost_lens[ARGS_MAX_LENGTHS], ncost;   /* --cost-lengths (ncost 0: none) */
    int trace_src[TRACE_MAX];                    /* --trace example (trace_len 0: none) */
    size_t trace_len;
    char dir[AFILE_PATH_MAX];                    /* at most ARGS_PATH_MAX characters */
    int quiet, force;
    size_t threads;                              /* --threads given with --resume, or 0 */
} train_job;

/* With --resume DIR every setting comes from DIR: refuses any other flag but --quiet and
 * --threads, and sets the BLAS threads of the latter. Returns 0 or the usage status. */
static int parse_resume(const args_line *a, train_job *j)
{
    for (int k = ARGS_FIRST; k < ARGS_END; k++)
        if (args_get(a, (args_flag)k) && k != ARGS_RESUME && k != ARGS_QUIET)
            return args_usage_error("--resume DIR takes its settings from DIR (accepted with "
                                    "it: --quiet, --threads)");
    for (size_t k = 0; k < a->n_given; k++)
        if (strcmp(config_fields[a->given[k]].name, "threads") != 0)
            return args_usage_error("--resume DIR takes its settings from DIR; --%s is not "
                                    "accepted with it (accepted: --quiet, --threads)",
                                    config_fields[a->given[k]].name);
    config c; /* --threads, read by the table's own rules */
    const model_ops *none;
    const args_plan shared = {.shared = 1};
    int rc = args_config(a, &shared, &c, &none);
    if (rc)
        return rc;
    j->threads = args_setting(a, "threads") ? c.threads : 0;
    buildinfo_set_threads(c.threads);
    return 0;
}

/* Parses a train command line into j (everything but resuming; *resume receives the
 * directory of --resume or NULL). Returns 0, ARGS_HELP_SHOWN, or the usage status after
 * printing the error. */
static int parse_train(int argc, char **argv, train_job *j, const char **resume)
{
    static const args_flag allowed[] = {ARGS_TRAIN_LEN, ARGS_OUT,   ARGS_EVAL_LENGTHS,
                                        ARGS_SAMPLES,   ARGS_QUIET, ARGS_TRACE,
                                        ARGS_COST_LENGTHS, ARGS_RESUME, ARGS_FORCE, 0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_train_help, &a);
    if (rc)
        return rc;
    *resume = args_get(&a, ARGS_RESUME);
    j->quiet = args_get(&a, ARGS_QUIET) != NULL;
    j->force = args_get(&a, ARGS_FORCE) != NULL;
    if (*resume)
        return parse_resume(&a, j);
    const args_plan plan = {0};
    if ((rc = args_config(&a, &plan, &j->c, &j->ops)))
        return rc;
    j->samples = 256;
    /* every value of a flag given twice is checked; the last one is kept */
    if (args_lengths_of(&a, ARGS_EVAL_LENGTHS, j->c.max_len, j->lens, &j->nl))
        return ARGS_EXIT_USAGE;
    char err[ARGS_ERR_MAX];
    const task *t = task_open(&j->c, err, sizeof err); /* args_config read it already */
    if (!t)
        return args_usage_error("--task %s: %s", j->c.task, err);
    if (t->data)
        rc = cmd_data_lengths(t, "--eval-lengths", j->lens, &j->nl);
    else if (j->nl == 0)
        j->nl = eval_default_lengths(&j->c, j->lens, ARGS_MAX_LENGTHS);
    const char *trace;
    for (size_t k = 0; rc == 0 && (trace = args_nth(&a, ARGS_TRACE, k)) != NULL; k++)
        if (task_parse(t, j->c.symbols, trace, j->trace_src, j->c.max_len, &j->trace_len, err,
                       sizeof err) != 0)
            rc = args_usage_error("--trace: %s", err);
    task_close(t);
    if (rc || args_count(&a, ARGS_SAMPLES, 1, 1000000, &j->samples) ||
        args_lengths_of(&a, ARGS_COST_LENGTHS, j->c.max_len, j->cost_lens, &j->ncost))
        return rc ? rc : ARGS_EXIT_USAGE;
    /* --out was checked as a path (args_path): at most ARGS_PATH_MAX characters, so it
     * fits whole */
    char short_task[CONFIG_TASK_MAX];
    task_short_name(j->c.task, short_task, sizeof short_task);
    if (args_get(&a, ARGS_OUT))
        snprintf(j->dir, sizeof j->dir, "%s", args_get(&a, ARGS_OUT));
    else
        snprintf(j->dir, sizeof j->dir, "results/%s-%s-s%lu", j->c.model, short_task,
                 j->c.seed);
    buildinfo_set_threads(j->c.threads);
    return 0;
}

int cmd_train_check(int argc, char **argv)
{
    static train_job j;
    const char *resume = NULL;
    memset(&j, 0, sizeof j);
    return args_exit(parse_train(argc, argv, &j, &resume));
}

/* ---- resuming ----------------------------------------------------------------------------- */

/* Rebuilds the job of the stopped run in dir from its args.txt (keeping the --quiet and
 * --threads of this command), checks that args.txt, config.tsv and checkpoint.ckpt
 * describe one run, and loads the checkpoint into *m and *st. Returns 0 or the exit
 * status after the message; *m and *st are the caller's to free either way. */
static int resume_job(train_job *j, const char *dir, model **m, ckpt_train_state *st)
{
    char **rargv = NULL, *rtext = NULL, err[ARGS_ERR_MAX], path[AFILE_PATH_MAX];
    const int quiet = j->quiet;
    const size_t threads = j->threads;
    int rargc = traindir_read_args(dir, &rargv, &rtext, err, sizeof err);
    if (rargc < 0 && cmd_exists_in(dir, "args.txt")) /* there, but not readable */
        return args_run_error("--resume: %s", err);
    if (rargc < 0)
        return args_run_error("--resume: %s holds no args.txt: not a run directory of "
                              "attnlab train, or its run stopped before it began (then start "
                              "it again with its attnlab train command)", dir);
    const char *again = NULL;
    int rc = parse_train(rargc, rargv, j, &again);
    free(rargv);
    free(rtext);
    if (rc == ARGS_HELP_SHOWN)
        return ARGS_EXIT_RUNTIME;
    if (rc)
        return rc;
    if (again)
        return args_run_error("--resume: %s/args.txt is not a train command", dir);
    j->quiet = quiet;
    if (threads) /* this command's --threads, over the stored command's */
        buildinfo_set_threads(threads);
    snprintf(j->dir, sizeof j->dir, "%s", dir);
    if (cmd_exists_in(j->dir, "eval.tsv"))
        return args_run_error("--resume: the run in %s has already finished", j->dir);
    if (!cmd_exists_in(j->dir, "checkpoint.ckpt"))
        return traindir_not_started(j->dir);
    /* args.txt against config.tsv, then the checkpoint against config.tsv: every field */
    if ((rc = traindir_check_args(j->dir, &j->c)) != 0)
        return rc;
    afile_join(path, sizeof path, j->dir, "checkpoint.ckpt");
    *m = ckpt_load(path, st, err, sizeof err);
    if (!*m)
        return args_run_error("--resume: %s", err);
    if ((rc = traindir_check_checkpoint(j->dir, &(*m)->cfg)) != 0)
        return rc;
    if (!st->m || strcmp((*m)->ops->name, j->c.model) != 0 || st->n != (*m)->params.size)
        return args_run_error("--resume: %s holds no training state of this run", path);
    return 0;
}

/* Puts the random streams and Adam's moments of st back into r and o. Returns 0, or the
 * runtime status when the streams were saved on another platform. */
static int restore_state(const ckpt_train_state *st, rng_streams *r, optim *o)
{
    for (int k = 0; k < CKPT_RNG_STREAMS; k++) {
        if (st->rng_size[k] != gsl_rng_size(r->s[k]))
            return args_run_error("--resume: the random-number state in the checkpoint comes "
                                  "from another platform (size %zu, here %zu)",
                                  st->rng_size[k], gsl_rng_size(r->s[k]));
        memcpy(gsl_rng_state(r->s[k]), st->rng[k], st->rng_size[k]);
    }
    memcpy(o->m, st->m, o->n * sizeof *o->m);
    memcpy(o->v, st->v, o->n * sizeof *o->v);
    o->t = st->step;
    return 0;
}


/* Says what a run stopped by a signal during its final evaluation holds, and how to
 * finish it: the evaluation alone, by attnlab eval with this run's lengths, samples and
 * seed (the checkpoint's), writes the very eval.tsv and eval_positions.tsv the run would
 * have written. Returns the exit status of the stop. */
static int stopped_in_evaluation(const train_job *j)
{
    fprintf(stderr, "%s: stopped by signal %d during the final evaluation: %s holds the "
            "trained model (train_log.tsv, model.ckpt, last.ckpt, build.tsv%s%s) but no "
            "eval.tsv or eval_positions.tsv, so the run is not finished; to write them: "
            "attnlab eval --checkpoint %s/model.ckpt --out %s --lengths ", args_command(),
            (int)cmd_stop_signal, j->dir, j->trace_len ? ", trace/" : "",
            j->ncost ? ", cost.tsv" : "", j->dir, j->dir);
    for (size_t k = 0; k < j->nl; k++)
        fprintf(stderr, "%s%zu", k ? "," : "", j->lens[k]);
    if (!task_is_file(j->c.task)) /* a file task evaluates every test example */
        fprintf(stderr, " --samples %zu", j->samples);
    fputc('\n', stderr);
    return cmd_stopped_status();
}

/* Writes what a finished training leaves, in order: the log, model.ckpt, build.tsv, the
 * trace, the cost, then the evaluation (eval.tsv last). Returns the exit status. A stop
 * signal ends the evaluation (stopped_in_evaluation); the files before it are always
 * written whole. plan says what the evaluation will decode (cmd_evaluation_plan). */
static int finish_run(const train_job *j, model *m, rng_streams *r,
                      const trainfiles_log *log, const train_summary *ts,
                      const train_best *best, const char *plan)
{
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    int rc;
    if (cmd_write_file(j->dir, "train_log.tsv", trainfiles_write_log, log) != 0)
        return ARGS_EXIT_RUNTIME;
    /* last.ckpt: the weights after the last step; model.ckpt, and everything measured
     * after it: the weights of the best validation */
    afile_join(path, sizeof path, j->dir, "last.ckpt");
    if (ckpt_save(path, m, NULL, err, sizeof err) != 0)
        return args_run_error("%s", err);
    if (best->step)
        memcpy(m->params.data, best->w, m->params.size * sizeof *best->w);
    afile_join(path, sizeof path, j->dir, "model.ckpt");
    if (ckpt_save(path, m, NULL, err, sizeof err) != 0)
        return args_run_error("%s", err);
    afile_join(path, sizeof path, j->dir, "best.ckpt");
    unlink(path); /* model.ckpt holds it now */
    trainfiles_facts rf = {m, ts, best};
    if (cmd_write_file(j->dir, "build.tsv", trainfiles_write_build, &rf) != 0)
        return ARGS_EXIT_RUNTIME;
    if (j->trace_len) {
        char tdir[AFILE_PATH_MAX];
        if (safedir_enter(j->dir, "trace", tdir, sizeof tdir, err, sizeof err) != 0)
            return args_run_error("%s", err); /* never a trace through a link (safedir.h) */
        if ((rc = cmd_write_trace(m, j->trace_src, j->trace_len, 0, tdir, 0)) != 0)
            return rc;
    }
    if (j->ncost && (rc = cmd_measure_cost(m, j->cost_lens, j->ncost, r->s[RNG_EVAL], j->dir)))
        return rc;
    if (!j->quiet)
        fprintf(stderr, "trained in %.1f s; evaluating %s\n", ts->seconds, plan);
    /* eval.tsv is written last: its presence marks a finished run (compare resumes on it) */
    rc = cmd_evaluate(m, j->lens, j->nl, j->samples, j->c.seed, j->dir, !j->quiet);
    if (cmd_stop_signal && rc == cmd_stopped_status())
        return stopped_in_evaluation(j);
    if (rc == 0 && !j->quiet)
        fprintf(stderr, "wrote %s/{config,build,train_log,eval,eval_positions}.tsv and "
                "%s/model.ckpt\n", j->dir, j->dir);
    return rc;
}

/* ---- attnlab train ----------------------------------------------------------------------- */

/* Trains m from step `first`, then writes the run; st is the saved state of a resumed
 * run (its log is restored up to st->step), NULL for a new one. Returns the exit status:
 * 128 + the signal when stopped (the state saved). */
static int run_training(const train_job *j, model *m, rng_streams *r, optim *o, size_t first,
                        const ckpt_train_state *st)
{
    const config *c = &j->c;
    char err[ARGS_ERR_MAX], path[AFILE_PATH_MAX];
    trainfiles_log log = {0};
    train_summary ts;
    log.f = open_memstream(&log.buf, &log.len);
    if (!log.f)
        return args_run_error("out of memory");
    train_log_header(log.f);
    /* the best validation so far and its weights (the current ones until there is one) */
    train_best best = {.w = malloc(m->params.size * sizeof(double))};
    if (!best.w) {
        fclose(log.f);
        free(log.buf);
        return args_run_error("out of memory");
    }
    memcpy(best.w, m->params.data, m->params.size * sizeof(double));
    trainfiles_ckpt cc = {m, r, j->dir, &log, &best, 0, 0, 0};
    train_hooks hooks = {&cmd_stop_signal, c->checkpoint_every, trainfiles_save, &cc, 0,
                         progress_show, NULL};
    if (st) {
        hooks.seconds_offset = traindir_restore_log(j->dir, st->step, log.f, &best, c);
        if (hooks.seconds_offset < 0) {
            fclose(log.f);
            free(log.buf);
            free(best.w);
            return ARGS_EXIT_RUNTIME;
        }
        traindir_restore_best(j->dir, best.w, m->params.size);
        cc.best_saved = best.step;
        cc.ckpt_step = cc.log_step = st->step; /* the log reaches it (restore_log) */
    }
    train_progress progress = j->quiet ? TRAIN_QUIET : isatty(2) ? TRAIN_BAR : TRAIN_LINES;
    const task *t = task_open(c, err, sizeof err);
    if (t && t->data && progress != TRAIN_QUIET) { /* what the data file gave */
        char about[512];
        dataset_summary(t->data, about, sizeof about);
        fprintf(stderr, "%s: %s\n", c->task, about);
    }
    int rc, tr = t ? train_run(m, t, c, r, o, first, log.f, progress, &hooks, &best, &ts, err,
                               sizeof err)
                   : TRAIN_FAILED;
    char plan[256]; /* what the final evaluation decodes, said before it starts */
    cmd_evaluation_plan(t, j->lens, j->nl, j->samples, plan, sizeof plan);
    task_close(t);
    if (tr == TRAIN_STOPPED) {
        /* save where we are, so --resume continues exactly from here */
        afile_join(path, sizeof path, j->dir, "checkpoint.ckpt");
        if (ts.steps >= first && trainfiles_save(&cc, ts.steps, o) != 0) {
            rc = ARGS_EXIT_RUNTIME;
        } else if (access(path, F_OK) != 0) {
            /* stopped before the first step of a new run: nothing to resume */
            char *again = traindir_restart_command(j->dir);
            fprintf(stderr, "%s: stopped by signal %d before its first step; start it again "
                    "with: %s\n", args_command(), (int)cmd_stop_signal,
                    again ? again : "the same command");
            free(again);
            rc = cmd_stopped_status();
        } else {
            fprintf(stderr, "%s: stopped by signal %d after step %zu; resume with: attnlab "
                    "train --resume %s\n", args_command(), (int)cmd_stop_signal, ts.steps,
                    j->dir);
            rc = cmd_stopped_status();
        }
    } else if (tr == TRAIN_FAILED) {
        /* keep the log up to the last good step beside the last good checkpoint; when
         * it cannot be written, the one on disk reaches that checkpoint (trainfiles_save) */
        char why[ARGS_ERR_MAX];
        const int log_kept = afile_write(j->dir, "train_log.tsv", trainfiles_write_log, &log,
                                         why, sizeof why) == 0 || cc.log_step;
        afile_join(path, sizeof path, j->dir, "checkpoint.ckpt");
        /* name only what is on disk and whole */
        if (cc.ckpt_step && log_kept)
            rc = args_run_error("%s; the log and the last good checkpoint (%s, step %zu) are "
                                "kept", err, path, cc.ckpt_step);
        else if (cc.ckpt_step)
            rc = args_run_error("%s; the last good checkpoint (%s, step %zu) is kept", err,
                                path, cc.ckpt_step);
        else if (log_kept)
            rc = args_run_error("%s; the log is kept in %s", err, j->dir);
        else
            rc = args_run_error("%s; no log or checkpoint could be kept in %s", err, j->dir);
    } else {
        /* build.tsv's train_seconds is the run's, as its log counts them: a resumed run's
         * earlier sessions included (train_run times only its own loop) */
        ts.seconds += hooks.seconds_offset;
        rc = finish_run(j, m, r, &log, &ts, &best, plan);
    }
    fclose(log.f);
    free(log.buf);
    free(best.w);
    return rc;
}

int cmd_train(int argc, char **argv)
{
    static train_job j;
    memset(&j, 0, sizeof j);
    const char *resume = NULL;
    int rc = parse_train(argc, argv, &j, &resume);
    if (rc)
        return args_exit(rc);
    ckpt_train_state st = {0};
    model *m = NULL;
    rng_streams r;
    optim o;
    runlock lock = {-1};
    memset(&r, 0, sizeof r);
    memset(&o, 0, sizeof o);
    /* one writer per directory, from before the first file is read until the exit */
    rc = resume ? traindir_lock_existing(&lock, resume)
                : traindir_claim(&lock, j.dir, &j.c, j.force);
    if (rc)
        goto out;
    /* from here a stop signal ends the run in order, however early it comes */
    cmd_catch_stop_signals();
    cmd_watch_parent();
    if (resume && (rc = resume_job(&j, resume, &m, &st)) != 0)
        goto out;
    const config *c = &j.c;
    if (!resume && (traindir_write_args(j.dir, argc, argv) != 0 ||
                    cmd_write_file(j.dir, "config.tsv", trainfiles_write_config, c) != 0)) {
        rc = ARGS_EXIT_RUNTIME;
        goto out;
    }
    size_t first = 1;
    if (rng_open(&r, c->seed) != 0 || (!m && !(m = j.ops->alloc(c))) ||
        optim_alloc(&o, m->params.size, c->beta1, c->beta2, c->eps) != 0) {
        rc = args_run_error("out of memory building %s", c->model);
        goto out;
    }
    if (resume) {
        if ((rc = restore_state(&st, &r, &o)) != 0)
            goto out;
        first = st.step + 1;
    } else {
        j.ops->init(m, r.s[RNG_INIT]);
    }
    if (!j.quiet)
        fprintf(stderr, "%s: %zu parameters, task %s, lengths %zu..%zu, %zu steps of %zu%s\n",
                c->model, m->params.size, c->task, c->train_min, c->train_max, c->steps,
                c->batch, resume ? " (resumed)" : "");
    if (resume && !j.quiet)
        fprintf(stderr, "resuming %s after step %zu\n", j.dir, st.step);
    rc = run_training(&j, m, &r, &o, first, resume ? &st : NULL);
out:
    optim_free(&o);
    rng_close(&r);
    if (m)
        m->ops->free(m);
    ckpt_train_state_free(&st);
    runlock_release(&lock);
    return rc;
}
