/* cmd_compare.c — attnlab compare: every model x seed on one task, then the merged tables
 * and figures.
 *
 * Design. compare does not train in-process: it turns its flags into one self-contained
 * `attnlab train` command per model and seed (the shared settings written out in full,
 * each model's sizes and recipe left to its own defaults), then hands the list to the
 * process manager of compare_jobs.c, or prints it with --print-jobs so the same
 * computation can be spread over many machines. A preset names the steps, lengths and
 * seeds of a documented experiment; flags given after it override it. When every run
 * has ended the runs are merged exactly as `attnlab report DIR` would merge them.
 *
 * One compare per directory: it holds DIR/.lock (runlock.h) from before it looks at the
 * runs until it exits. Each model may appear once in --models: two runs of one model and
 * seed would share one run directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buildinfo.h"
#include "args.h"
#include "cmd.h"
#include "cmd_files.h"
#include "cmd_stop.h"
#include "compare_jobs.h"
#include "compare_presets.h"
#include "../core/config.h"
#include "../core/model.h"
#include "runlock.h"
#include "safedir.h"
#include "../core/train.h"

/* Room for the example each run traces (--trace): a file task's source, in words. */
#define COMPARE_TRACE_MAX 1024

void cmd_compare_help(void)
{
    char models[256];
    args_all_models(models, sizeof models);
    printf(
        "Usage: attnlab compare\n"
        "         [--preset smoke|quick|full|capacity|lrsweep|control|inrange|positions|distance|bahdanau]\n"
        "         [--task NAME] [--models LIST] [--seeds N] [--train-len MIN:MAX]\n"
        "         [--eval-lengths SPEC] [--steps N] [--batch N] [--samples N] [--jobs N]\n"
        "         [--out DIR] [--print-jobs]\n"
        "\n"
        "Trains every model x seed as an independent run (the same training sequences for\n"
        "every model of a seed: same seed, steps and batch size; each model with its own\n"
        "documented optimiser recipe), evaluates each at every length inside the training\n"
        "range and beyond it, then merges the runs (attnlab report): tables, figures and\n"
        "DIR/report.html. Runs go in parallel processes. A rerun with the same arguments\n"
        "skips the runs already finished, so an interrupted compare resumes.\n"
        "\n"
        "Presets (flags given after override them):\n");
    for (size_t k = 0; k < compare_n_presets; k++)
        printf("  %-9s %zu seed(s), %zu steps, train %zu:%zu, eval %s: %s\n",
               compare_presets[k].name, compare_presets[k].seeds, compare_presets[k].steps,
               compare_presets[k].train_min, compare_presets[k].train_max,
               compare_presets[k].eval_lengths ? compare_presets[k].eval_lengths
                                               : "the test set",
               compare_presets[k].about);
    printf(
        "\n"
        "The default preset is quick. Sequences per evaluation length (--samples): smoke 32,\n"
        "quick 128, the others 256. Each preset validates every --log-every steps and\n"
        "stops a run at a plateau (--patience validations in which the mean of the last\n"
        "--val-window gained less than --min-delta) or once its validation token accuracy\n"
        "reaches --stop-acc; all but smoke aim at 0.999, decay the learning rate by a\n"
        "cosine over --decay-steps (quick 4000, the others 40000; the cap plays no part in\n"
        "it) and also validate log-spaced from --val-first (quick 20, the others 50). A run\n"
        "that reaches --steps is censored: the report says it did not reach the target\n"
        "within the cap. full, capacity, control, positions and bahdanau train a model at\n"
        "each setting its sweep for the preset lists (runs MODEL-KEYVALUE-sSEED, e.g.\n"
        "MODEL-hidden64-s1; full and capacity train a model that lists none once, the\n"
        "others leave it out unless --models names it); lrsweep trains every model at four\n"
        "rates (runs MODEL-lrR-sSEED), and full each at the one of them it lists, its best\n"
        "(so full's runs are lrsweep's runs at those rates).\n"
        "\n"
        "  --models LIST   comma-separated, each model once (default: %s)\n"
        "  --seeds N       seeds 1..N\n"
        "  --jobs N        runs at once (default: the number of cores)\n"
        "  --out DIR       comparison directory (default results/compare); one compare at\n"
        "                  a time: a directory in use by another is refused, a run still\n"
        "                  locked by a run of an earlier compare is waited for\n"
        "  --task, --steps, --batch, --symbols, --threads, --log-every, --patience,\n"
        "  --min-delta, --val-samples, --stop-acc, --val-window, --lr-schedule,\n"
        "  --lr-floor, --decay-steps, --val-first\n"
        "                  as for train (the same for every model; sizes stay each\n"
        "                  model's own); --steps is the cap of a run that has not reached\n"
        "                  the target or a plateau\n"
        "  --print-jobs    print one self-contained 'attnlab train' command per run and\n"
        "                  stop, to spread the runs with GNU parallel or job arrays; then\n"
        "                  merge them with 'attnlab report DIR'\n"
        "\n"
        "A flag given twice keeps its last value, and only when every value given is valid.\n"
        "A run directory under DIR holding a run of another command is never replaced:\n"
        "compare refuses to start.\n"
        "\n"
        "Examples:\n"
        "  attnlab compare --preset quick --out results/demo\n"
        "  attnlab compare --preset full --jobs 2 --out results/full\n"
        "  attnlab compare --preset full --print-jobs --out /shared/full | parallel -j 16\n"
        "  attnlab report /shared/full\n",
        models);
}

/* Everything a compare command decided: the shared settings and the experiment. */
typedef struct compare_plan {
    config c;                       /* shared settings: task, lengths, steps, batch ... */
    const compare_preset *ps;
    const model_ops *list[ARGS_MAX_MODELS];
    size_t nm;
    char models[ARGS_MAX_MODELS * CONFIG_STR_MAX]; /* the names joined, for the manifest */
    struct setup { /* at most one per model, or the preset's sweep (a test checks it fits) */
        const model_ops *ops;
        char flag[CONFIG_STR_MAX];  /* "--KEY=VALUE", or "" for the canonical setup */
        char label[2 * CONFIG_STR_MAX]; /* the model, or MODEL-KEYVALUE */
    } setup[COMPARE_MAX_SETUPS];
    size_t ns;
    size_t seeds, samples, jobs;
    const char *eval_spec;          /* --eval-lengths as given, or the preset's; for a file
                                     * task without it, COMPARE_TEST_SET */
    char trace[COMPARE_TRACE_MAX];  /* a file task's trace example: its first test source */
    const char *out;
    char exe[AFILE_PATH_MAX];       /* this program, which every job runs */
} compare_plan;

/* The preset's steps and training range: between the generic defaults and the flags. */
static void preset_overrides(config *c, const model_ops *ops, const void *ctx)
{
    const compare_preset *ps = ctx;
    (void)ops;
    c->steps = ps->steps;
    c->train_min = ps->train_min;
    c->train_max = ps->train_max;
    c->log_every = ps->log_every;
    c->patience = ps->patience;
    c->val_window = ps->val_window;
    c->stop_acc = ps->stop_acc;
    c->decay_steps = ps->decay_steps;
    c->val_first = ps->val_first;
    if (ps->task)
        snprintf(c->task, sizeof c->task, "%s", ps->task);
    /* learning-rate decay over the preset's horizon: a run still learning then goes on
     * at small steps (the jitter of the validation shrinks with the rate) until the
     * target or a plateau (the attention models reach the target long before the rate
     * falls) */
    snprintf(c->lr_schedule, sizeof c->lr_schedule, "%s", ps->patience ? "cosine" : "constant");
}

/* The setups of p: for each model of the list in turn, the preset's sweep of it (its
 * settings from its ops or from lr_rates, each "KEY=VALUE", "" for the defaults) or the
 * model once; a model the preset does not sweep is left out when the preset says so and
 * named (the list is the default one). Returns 0, or -1 when they are more than
 * COMPARE_MAX_SETUPS. */
static int make_setups(compare_plan *p, int named)
{
    p->ns = 0;
    for (size_t m = 0; m < p->nm; m++) {
        const model_ops *ops = p->list[m];
        const char *const *sweep = p->ps->sweep == SWEEP_LR    ? compare_lr_rates
                                   : p->ps->sweep == SWEEP_OPS ? model_sweep_of(ops, p->ps->name)
                                                               : NULL;
        if (p->ps->sweep == SWEEP_OPS && !sweep && !p->ps->others && !named)
            continue;
        for (size_t k = 0; k == 0 || (sweep && sweep[k]); k++) {
            const char *setting = sweep && sweep[k][0] ? sweep[k] : NULL;
            if (p->ns == COMPARE_MAX_SETUPS)
                return -1;
            struct setup *u = &p->setup[p->ns++];
            u->ops = ops;
            u->flag[0] = '\0';
            snprintf(u->label, sizeof u->label, "%s", ops->name);
            if (setting) {
                /* MODEL-KEYVALUE: MODEL-hidden256 for "hidden=256" */
                const size_t klen = strcspn(setting, "=");
                /* as train takes it: hidden=166 is --hidden=166, feed_context=1 (a
                 * switch) is --feed-context */
                char key[CONFIG_STR_MAX];
                snprintf(key, sizeof key, "%.*s", (int)klen, setting);
                const config_field *fld = config_find(key);
                const int sw = fld && fld->type == CFG_BOOL; /* a switch: only "=1" is listed */
                snprintf(u->flag, sizeof u->flag, "--%.*s%s%s", (int)klen, setting,
                         sw || !setting[klen] ? "" : "=", sw || !setting[klen] ? "" :
                         setting + klen + 1);
                for (char *q = u->flag + 2; *q && *q != '='; q++)
                    *q = *q == '_' ? '-' : *q;
                snprintf(u->label, sizeof u->label, "%s-%.*s%s", ops->name, (int)klen,
                         setting, setting[klen] ? setting + klen + 1 : "");
            }
        }
    }
    return 0;
}

/* The --eval-lengths of a file task's comparison when none is given: its test set. */
static const char COMPARE_TEST_SET[] = "the test set";

/* Writes the source of the first test example of c's file task, as words, into trace
 * (the example each run traces). Returns 0, or prints and returns the usage status. */
static int make_file_trace(const config *c, char *trace, size_t n)
{
    char err[ARGS_ERR_MAX];
    const task *t = task_open(c, err, sizeof err);
    if (!t)
        return args_usage_error("--task %s: %s", c->task, err);
    const dataset_example *e = &t->data->ex[t->data->set[DATASET_TEST].first];
    size_t at = 0;
    trace[0] = '\0';
    for (size_t i = 0; i < e->Ts && at < n; i++)
        at += (size_t)snprintf(trace + at, n - at, i ? " %s" : "%s", t->data->words[e->src[i]]);
    task_close(t);
    if (at >= n)
        trace[0] = '\0'; /* too long to trace: the runs trace nothing */
    return 0;
}

/* Parses a compare command line into p. Returns 0, ARGS_HELP_SHOWN, or the exit status
 * after printing the error. */
static int parse_compare(int argc, char **argv, compare_plan *p, int *print_jobs)
{
    static const args_flag allowed[] = {ARGS_PRESET,    ARGS_MODELS,       ARGS_SEEDS,
                                        ARGS_TRAIN_LEN, ARGS_EVAL_LENGTHS, ARGS_SAMPLES,
                                        ARGS_JOBS,      ARGS_OUT,          ARGS_PRINT_JOBS, 0};
    args_line a;
    int rc = args_parse(argc, argv, 1, allowed, cmd_compare_help, &a);
    if (rc)
        return rc;
    /* the settings a comparison may change; sizes stay each model's canonical ones */
    static const char *const ok_fields[] = {"task",      "steps",    "batch",
                                            "symbols",   "threads",  "log_every",
                                            "patience",  "min_delta", "val_samples",
                                            "stop_acc",  "val_window", "lr_schedule",
                                            "lr_floor",  "decay_steps", "val_first", NULL};
    for (size_t k = 0; k < a.n_given; k++) {
        const char *name = config_fields[a.given[k]].name;
        size_t i = 0;
        while (ok_fields[i] && strcmp(ok_fields[i], name) != 0)
            i++;
        if (!ok_fields[i])
            return args_usage_error("--%s: compare trains each model with its own defaults "
                                    "(accepted here: --task, --steps, --batch, --symbols, "
                                    "--threads, --log-every, --patience, --min-delta, "
                                    "--val-samples, --stop-acc, --val-window, "
                                    "--lr-schedule, --lr-floor, --decay-steps, "
                                    "--val-first; train one model with "
                                    "attnlab train to change its sizes)", name);
    }
    p->ps = compare_preset_named("quick");
    const char *name;
    for (size_t g = 0; (name = args_nth(&a, ARGS_PRESET, g)) != NULL; g++) {
        p->ps = NULL;
        p->ps = compare_preset_named(name);
        if (!p->ps)
            return args_usage_error("--preset: unknown preset '%s' (accepted: smoke, quick, "
                                    "full, capacity, lrsweep, control, inrange, positions, "
                                    "distance, bahdanau)", name);
    }
    const model_ops *none;
    /* a preset without evaluation lengths is for a file task, its range its own */
    const args_plan plan = {.shared = 1, .overrides = preset_overrides, .ctx = p->ps,
                            .own_train_range = p->ps->eval_lengths == NULL};
    if ((rc = args_config(&a, &plan, &p->c, &none)))
        return rc;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->seeds = p->ps->seeds;
    p->samples = p->ps->samples;
    p->jobs = cores < 1 ? 1 : (size_t)cores;
    if (args_count(&a, ARGS_SEEDS, 1, 1000, &p->seeds) ||
        args_count(&a, ARGS_SAMPLES, 1, 1000000, &p->samples) ||
        args_count(&a, ARGS_JOBS, 1, 256, &p->jobs))
        return ARGS_EXIT_USAGE;
    p->eval_spec = args_get(&a, ARGS_EVAL_LENGTHS) ? args_get(&a, ARGS_EVAL_LENGTHS)
                                                   : p->ps->eval_lengths;
    /* a file task is evaluated on its test set, at its own lengths unless some are given
     * (each run checks them against the file) */
    const int file = task_is_file(p->c.task);
    if (!p->ps->eval_lengths && !file)
        return args_usage_error("--preset %s: its runs are tested on the test set of a task "
                                "read from a file (accepted: --task file:PATH; make "
                                "translate-data writes build/data/translate.tsv)", p->ps->name);
    if (file && !args_get(&a, ARGS_EVAL_LENGTHS))
        p->eval_spec = COMPARE_TEST_SET;
    static size_t lens[ARGS_MAX_LENGTHS]; /* checked here (every value), passed on as text */
    size_t nl;
    if (args_lengths_of(&a, ARGS_EVAL_LENGTHS, p->c.max_len, lens, &nl) ||
        (p->eval_spec != COMPARE_TEST_SET &&
         args_lengths("eval-lengths", p->eval_spec, p->c.max_len, lens, &nl)))
        return ARGS_EXIT_USAGE;
    if (file && make_file_trace(&p->c, p->trace, sizeof p->trace) != 0)
        return ARGS_EXIT_USAGE;
    /* the list was checked by args_parse: known names, each once */
    if (args_models(args_get(&a, ARGS_MODELS), p->list, &p->nm))
        return ARGS_EXIT_USAGE;
    if (args_join_models(p->list, p->nm, p->models, sizeof p->models) != 0)
        return args_usage_error("--models: the names do not fit in %zu characters",
                                sizeof p->models);
    if (make_setups(p, args_get(&a, ARGS_MODELS) != NULL) != 0)
        return args_usage_error("--models: the preset %s makes more than %d setups of %s "
                                "(accepted: fewer models)", p->ps->name, COMPARE_MAX_SETUPS,
                                p->models);
    if (p->ns == 0)
        return args_usage_error("--preset %s: none of the models %s has setups for it "
                                "(accepted: --models naming one that does, or any model "
                                "named, to train it once at its defaults)", p->ps->name,
                                p->models);
    p->out = args_get(&a, ARGS_OUT) ? args_get(&a, ARGS_OUT) : "results/compare";
    /* every run directory below --out (OUT/runs/LABEL-sSEED) must be a path train takes */
    size_t widest = 0;
    for (size_t k = 0; k < p->ns; k++)
        if (strlen(p->setup[k].label) > widest)
            widest = strlen(p->setup[k].label);
    const size_t room = strlen("/runs/-s") + widest + (size_t)snprintf(NULL, 0, "%zu", p->seeds);
    if (strlen(p->out) + room > ARGS_PATH_MAX)
        return args_usage_error("--out: the path is %zu characters long, too long for the run "
                                "directories under it (accepted: at most %zu)",
                                strlen(p->out), ARGS_PATH_MAX - room);
    *print_jobs = args_get(&a, ARGS_PRINT_JOBS) != NULL;
    /* each job runs this same program: found without /proc where there is none */
    if (buildinfo_self_path(p->exe, sizeof p->exe) != 0)
        return args_run_error("cannot find the program's own path (from the system or from "
                              "argv[0]); run it by its path, e.g. build/attnlab compare ...");
    return 0;
}

/* The value of setting name in c as config.tsv writes it (config_format: a double in the
 * fewest digits that read back as itself, 0.1 rather than 0.10000000000000001), so a
 * job's command is what a person would type and passes on exactly the value compare
 * holds. Returns buf. */
static const char *setting_text(const config *c, const char *name, char buf[static 64])
{
    config_format(c, config_find(name), buf, 64);
    return buf;
}

/* Fills the job list: seed-major, setups in order (models in the order given), each with
 * the complete train command of its run. Returns 0, or -1 when memory runs out or a
 * command needs more than COMPARE_MAX_ARGS arguments. */
static int make_jobs(const compare_plan *p, compare_job *jl)
{
    const config *c = &p->c;
    /* the trace example: the first digits of pi, cut to the training range (for a file
     * task, the source of its first test example, made by parse_compare) */
    static const int pi[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
    char trace[COMPARE_TRACE_MAX] = "";
    size_t tl = c->train_max < 12 ? c->train_max : 12;
    if (p->trace[0]) {
        snprintf(trace, sizeof trace, "%s", p->trace);
        tl = 0;
    }
    for (size_t i = 0; i < tl; i++) {
        char w[8];
        snprintf(w, sizeof w, i ? " %d" : "%d", pi[i] % (int)c->symbols);
        strcat(trace, w);
    }
    int bad = 0;
    char num[3][64];
    for (size_t s = 0; s < p->seeds; s++)
        for (size_t m = 0; m < p->ns; m++) {
            const struct setup *u = &p->setup[m];
            compare_job *j = &jl[s * p->ns + m];
            snprintf(j->label, sizeof j->label, "%s", u->label);
            j->seed = s + 1;
            j->state = COMPARE_WAITING;
            /* fits: parse_compare checked the longest of these against ARGS_PATH_MAX */
            snprintf(j->dir, sizeof j->dir, "%s/runs/%s-s%lu", p->out, j->label, j->seed);
            bad |= compare_job_arg(j, "%s", p->exe);
            bad |= compare_job_arg(j, "train");
            bad |= compare_job_arg(j, "--model=%s", u->ops->name);
            if (u->flag[0])
                bad |= compare_job_arg(j, "%s", u->flag);
            bad |= compare_job_arg(j, "--task=%s", c->task);
            bad |= compare_job_arg(j, "--symbols=%zu", c->symbols);
            bad |= compare_job_arg(j, "--train-len=%zu:%zu", c->train_min, c->train_max);
            bad |= compare_job_arg(j, "--steps=%zu", c->steps);
            bad |= compare_job_arg(j, "--batch=%zu", c->batch);
            bad |= compare_job_arg(j, "--seed=%lu", j->seed);
            bad |= compare_job_arg(j, "--threads=%zu", c->threads);
            bad |= compare_job_arg(j, "--log-every=%zu", c->log_every);
            bad |= compare_job_arg(j, "--patience=%zu", c->patience);
            bad |= compare_job_arg(j, "--min-delta=%s", setting_text(c, "min_delta", num[0]));
            bad |= compare_job_arg(j, "--stop-acc=%s", setting_text(c, "stop_acc", num[1]));
            bad |= compare_job_arg(j, "--val-window=%zu", c->val_window);
            bad |= compare_job_arg(j, "--lr-schedule=%s", c->lr_schedule);
            bad |= compare_job_arg(j, "--lr-floor=%s", setting_text(c, "lr_floor", num[2]));
            /* only when set: the commands (and so the run directories) of a comparison
             * without them stay those of earlier versions */
            if (c->decay_steps)
                bad |= compare_job_arg(j, "--decay-steps=%zu", c->decay_steps);
            if (c->val_first)
                bad |= compare_job_arg(j, "--val-first=%zu", c->val_first);
            bad |= compare_job_arg(j, "--val-samples=%zu", c->val_samples);
            if (p->eval_spec != COMPARE_TEST_SET)
                bad |= compare_job_arg(j, "--eval-lengths=%s", p->eval_spec);
            bad |= compare_job_arg(j, "--samples=%zu", p->samples);
            bad |= compare_job_arg(j, "--cost-lengths=%s", p->ps->cost_lengths);
            if (trace[0])
                bad |= compare_job_arg(j, "--trace=%s", trace);
            bad |= compare_job_arg(j, "--out=%s", j->dir);
            bad |= compare_job_arg(j, "--quiet");
        }
    return bad ? -1 : 0;
}

/* The time now, UTC, ISO 8601. */
static void now_text(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Runs the jobs not finished earlier, writes the manifest. Returns the number that
 * failed, or -1 when the manifest could not be written. */
static long run_jobs(const compare_plan *p, compare_job *jl, size_t njobs, int argc,
                     char **argv)
{
    char started[32], finished[32];
    now_text(started, sizeof started);
    const double t0 = train_now();
    const size_t todo = compare_skip_finished(jl, njobs);
    if (compare_check_dirs(jl, njobs) != 0)
        return -1;
    fprintf(stderr, "%s: %zu runs (%zu setups x %zu seeds), %zu to do, %zu at a time, "
            "into %s\n", args_command(), njobs, p->ns, p->seeds, todo, p->jobs, p->out);
    const size_t failed = compare_schedule(jl, njobs, todo, p->jobs, p->exe);
    now_text(finished, sizeof finished);
    /* the command as typed, whole, each word as a shell takes it back (cmd_shell_command,
     * as bench's manifest writes it): a stream that grows */
    char *command = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&command, &len);
    if (!f) {
        args_run_error("out of memory");
        return -1;
    }
    cmd_shell_command(f, argc, argv);
    if (fclose(f) != 0) {
        free(command);
        args_run_error("out of memory");
        return -1;
    }
    compare_manifest mf = {&p->c,  p->ps->name, p->models, p->eval_spec, command,
                           p->seeds, p->jobs,   p->samples, jl,         njobs,
                           train_now() - t0,    started,   finished};
    const int bad = compare_write_manifest(p->out, &mf);
    free(command);
    return bad ? -1 : (long)failed;
}

/* Refuses, before any run starts, a folder of p->out that compare or its runs write into
 * and that is a symbolic link or not a directory (safedir.h): runs/, each run directory
 * runs/LABEL-sSEED, and the report's trace/ and figures/. Returns 0, or the exit status
 * after one line. */
static int check_folders(const compare_plan *p, const compare_job *jl, size_t njobs)
{
    char err[ARGS_ERR_MAX], sub[AFILE_PATH_MAX];
    static const char *const own[] = {"runs", "trace", "figures"};
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (safedir_check(p->out, own[k], err, sizeof err) != 0)
            return args_run_error("--out: %s", err);
    for (size_t k = 0; k < njobs; k++) {
        snprintf(sub, sizeof sub, "runs/%s-s%lu", jl[k].label, jl[k].seed);
        if (safedir_check(p->out, sub, err, sizeof err) != 0)
            return args_run_error("--out: %s", err);
    }
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    static compare_plan p;
    memset(&p, 0, sizeof p);
    int print_jobs = 0;
    char err[ARGS_ERR_MAX];
    int rc = parse_compare(argc, argv, &p, &print_jobs);
    if (rc)
        return args_exit(rc);
    const size_t njobs = p.ns * p.seeds;
    compare_job *jl = calloc(njobs, sizeof *jl);
    if (!jl)
        return args_run_error("out of memory");
    runlock lock = {-1};
    long failed = 0;
    if (make_jobs(&p, jl) != 0) {
        rc = args_run_error("out of memory, or a job of more than %d arguments "
                            "(COMPARE_MAX_ARGS)", COMPARE_MAX_ARGS);
    } else if (print_jobs) {
        for (size_t k = 0; k < njobs; k++)
            compare_job_print(stdout, &jl[k]);
    } else if (afile_mkdirs(p.out, err, sizeof err) != 0) {
        rc = args_run_error("--out: %s", err);
    } else if ((rc = runlock_take(&lock, p.out, err, sizeof err)) != 0) {
        rc = rc == RUNLOCK_IN_USE
                 ? args_run_error("%s; wait for it to end, or choose another --out", err)
                 : args_run_error("--out: %s", err);
    } else if ((rc = check_folders(&p, jl, njobs)) == 0) {
        failed = run_jobs(&p, jl, njobs, argc, argv);
        if (failed < 0)
            rc = ARGS_EXIT_RUNTIME;
    }
    compare_jobs_free(jl, njobs);
    free(jl);
    if (rc || print_jobs) {
        runlock_release(&lock);
        return rc;
    }
    if (cmd_stop_signal) {
        fprintf(stderr, "%s: stopped by signal %d; the finished runs are kept and the "
                "stopped ones saved their state: run the same command again to resume\n",
                args_command(), (int)cmd_stop_signal);
        runlock_release(&lock);
        return cmd_stopped_status();
    }
    rc = cmd_report_dir(p.out);
    runlock_release(&lock);
    if (rc != 0)
        return rc;
    if (failed)
        return args_run_error("%zu of %zu runs failed (their messages are above); rerun the "
                              "same command to retry them", (size_t)failed, njobs);
    return 0;
}
