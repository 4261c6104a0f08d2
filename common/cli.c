/* cli.c — the attnlab command line: dispatch, help, --version, and the report command.
 *
 * Design. cli_main picks the command by its first word from one table and hands it the
 * rest of argv; each command lives in a file of its own (cli_cmd.h lists them) and reads
 * its flags with cli_args.h, so that a flag, a number or a list means the same in every
 * command. This file also holds what several commands do with run directories: writing
 * a file whole (afile.h), asking whether one exists, listing the runs of a comparison
 * and merging them (report, and compare at its end).
 *
 * Errors. A usage error prints one line naming the flag and what is accepted, then the
 * hint "Try 'attnlab CMD --help'.", and exits 2. A runtime error prints one line saying
 * what failed and what to do, and exits 1. Nothing already written is touched.
 */
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afile.h"
#include "buildinfo.h"
#include "cli_args.h"
#include "cli_cmd.h"
#include "model.h"
#include "report.h"
#include "safedir.h"
#include "summary.h"
#include "task.h"

/* Runs a command lists and report merges, at most. */
#define MAX_RUNS 4096

/* Run directories cmd_collect_runs found but had no room for: a report refuses to merge
 * a part of what it was given (merge_runs). */
static size_t runs_left_out;

/* ---- files of a run directory ------------------------------------------------------------ */

int cmd_write_file(const char *dir, const char *name, int (*write)(FILE *, const void *),
                   const void *ctx)
{
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    afile af;
    if (afile_join(path, sizeof path, dir, name) != 0) {
        args_run_error("%s/%s: path too long", dir, name);
        return -1;
    }
    if (afile_open(&af, path, err, sizeof err) != 0) {
        args_run_error("%s", err);
        return -1;
    }
    if (write(af.f, ctx) != 0) {
        afile_abort(&af);
        args_run_error("cannot write %s", path);
        return -1;
    }
    if (afile_commit(&af, err, sizeof err) != 0) {
        args_run_error("%s", err);
        return -1;
    }
    return 0;
}

int cmd_exists_in(const char *dir, const char *name)
{
    char path[AFILE_PATH_MAX];
    return afile_join(path, sizeof path, dir, name) == 0 && access(path, F_OK) == 0;
}

int cmd_holds_run(const char *dir)
{
    static const char *const marks[] = {"config.tsv", "args.txt", "model.ckpt",
                                        "checkpoint.ckpt"};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
        if (cmd_exists_in(dir, marks[k]))
            return 1;
    return 0;
}

int cmd_claim_out(runlock *l, const char *dir, int refuse_run, const char *what)
{
    char err[ARGS_ERR_MAX];
    l->fd = -1;
    if (afile_mkdirs(dir, err, sizeof err) != 0)
        return args_run_error("--out: %s", err);
    const int rc = runlock_take(l, dir, err, sizeof err);
    if (rc != 0)
        return args_run_error(rc == RUNLOCK_IN_USE ? "%s; wait for it to end, or choose "
                              "another --out" : "--out: %s", err);
    /* refuse_run 2: a run whose training ended (model.ckpt) but whose final evaluation
     * was stopped (no eval.tsv, no eval_positions.tsv) may have it written: nothing of
     * the run is replaced, and train's message on a stop gives that very command */
    const int unevaluated = refuse_run == 2 && cmd_exists_in(dir, "model.ckpt") &&
                            !cmd_exists_in(dir, "eval.tsv") &&
                            !cmd_exists_in(dir, "eval_positions.tsv");
    if (refuse_run && cmd_holds_run(dir) && !unevaluated) {
        runlock_release(l);
        return args_run_error("--out: %s holds a run of attnlab train: %s; choose another "
                              "--out", dir, what);
    }
    return 0;
}

void cmd_shell_word(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=+@%",
                    *p))
            plain = 0;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++)
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    fputc('\'', f);
}

/* Orders two entries of a list of paths (char[AFILE_PATH_MAX] each) by strcmp. */
static int compare_paths(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

size_t cmd_collect_runs(const char *path, char (*list)[AFILE_PATH_MAX], size_t max,
                        size_t have)
{
    char runs[AFILE_PATH_MAX];
    size_t added = 0;
    if (afile_join(runs, sizeof runs, path, "runs") == 0 && access(runs, F_OK) == 0) {
        DIR *d = opendir(runs);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char slot[AFILE_PATH_MAX];
            if (afile_join(slot, sizeof slot, runs, e->d_name) != 0 ||
                !cmd_exists_in(slot, "config.tsv"))
                continue;
            if (have + added == max) {
                runs_left_out++;
                continue;
            }
            memcpy(list[have + added++], slot, sizeof slot);
        }
        if (d)
            closedir(d);
        /* readdir order is arbitrary: sort so tables come out the same every time */
        qsort(list + have, added, sizeof *list, compare_paths);
    } else if (have < max) {
        snprintf(list[have], AFILE_PATH_MAX, "%s", path);
        added = 1;
    } else {
        runs_left_out++;
    }
    return added;
}

/* The run directories of one report (16 MiB: static, and one report per process). */
static char run_list[MAX_RUNS][AFILE_PATH_MAX];

/* Merges the nr runs of run_list into out, whose lock the caller holds. Returns the exit
 * status. */
static int merge_runs(size_t nr, const char *out)
{
    static const char *ptr[MAX_RUNS];
    char err[ARGS_ERR_MAX];
    if (runs_left_out)
        return args_run_error("more than %d run directories (%zu found): the limit of one "
                              "report; merge fewer at once", MAX_RUNS, nr + runs_left_out);
    for (size_t i = 0; i < nr; i++)
        ptr[i] = run_list[i];
    if (summary_report(ptr, nr, out, stdout, err, sizeof err) != 0)
        return args_run_error("%s", err);
    return 0;
}

int cmd_report_dir(const char *dir)
{
    return merge_runs(cmd_collect_runs(dir, run_list, MAX_RUNS, 0), dir);
}

/* ---- attnlab report ------------------------------------------------------------------------ */

void cmd_report_help(void)
{
    printf(
        "Usage: attnlab report [--out DIR] [--lang en|zh] PATH...\n"
        "\n"
        "Merges finished runs and draws the figures. Each PATH is a comparison directory\n"
        "(its runs/ are taken) or a run directory written by 'attnlab train'. Writes into\n"
        "DIR (default: the first PATH when it is a comparison directory) the tables\n"
        "accuracy, positions, curves, budget, convergence, capacity, cost and summary\n"
        "(.tsv), the figures (figures/, by gnuplot with plots/NAME.gp) and report.html,\n"
        "one self-contained page with the figures inside it. It prints the summary and\n"
        "how each model's runs ended (convergence: steps and seconds to the best\n"
        "validation).\n"
        "\n"
        "  --out DIR      where everything goes: not one of the runs merged, nor inside\n"
        "                 one; one report at a time writes a DIR (its lock)\n"
        "  --lang en|zh   the language of the page: en (default) writes report.html, zh\n"
        "                 writes report.zh.html, its headings, tables and captions in\n"
        "                 Chinese (the figures keep their English labels)\n"
        "\n"
        "Examples:\n"
        "  attnlab report results/demo\n"
        "  attnlab report --lang zh results/demo\n"
        "  attnlab report --out results/merged runs/A-s1 runs/A-s2 runs/B-s1\n");
}

int cmd_report(int argc, char **argv)
{
    /* the paths are operands mixed with one flag: a plain loop reads them in order */
    const char *out = NULL;
    const char *paths[256];
    size_t np = 0;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            cmd_report_help();
            return 0;
        }
        if (strcmp(argv[k], "--out") == 0 || strncmp(argv[k], "--out=", 6) == 0) {
            if (argv[k][5] == '=')
                out = argv[k] + 6;
            else if (k + 1 < argc)
                out = argv[++k];
            else
                return args_usage_error("flag '--out' needs a value");
            /* empty, or longer than a path may be; a newline is fine here (report keeps no
             * args.txt, and gnuplot never sees the path) */
            if (!*out)
                return args_usage_error("--out: empty path (accepted: a path of 1 to %d "
                                        "characters)", ARGS_PATH_MAX);
            if (strlen(out) > ARGS_PATH_MAX)
                return args_usage_error("--out: the path is %zu characters long (accepted: "
                                        "at most %d)", strlen(out), ARGS_PATH_MAX);
            continue;
        }
        if (strcmp(argv[k], "--lang") == 0 || strncmp(argv[k], "--lang=", 7) == 0) {
            const char *code = argv[k][6] == '=' ? argv[k] + 7 : k + 1 < argc ? argv[++k] : NULL;
            report_lang lang;
            if (!code)
                return args_usage_error("flag '--lang' needs a value (accepted: %s)",
                                        REPORT_LANGS);
            if (report_lang_parse(code, &lang) != 0)
                return args_usage_error("--lang: '%s' is not a language of the page "
                                        "(accepted: %s)", code, REPORT_LANGS);
            report_set_lang(lang);
            continue;
        }
        if (argv[k][0] == '-')
            return args_usage_error("unknown flag '%s' (accepted: --out DIR, --lang en|zh, "
                                    "--help)", argv[k]);
        if (np == 256)
            return args_usage_error("more than 256 paths");
        paths[np++] = argv[k];
    }
    if (np == 0)
        return args_usage_error("no PATH given (a comparison directory or run directories)");
    size_t nr = 0;
    for (size_t i = 0; i < np; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode))
            return args_run_error("%s is not a directory", paths[i]);
        nr += cmd_collect_runs(paths[i], run_list, MAX_RUNS, nr);
    }
    if (!out) {
        if (!cmd_exists_in(paths[0], "runs"))
            return args_usage_error("--out DIR is required when merging run directories");
        out = paths[0];
    }
    /* the report's files would replace a run's own (its cost.tsv, its trace/); a path
     * that holds no run (skipped later, with a line) is not an input to protect */
    for (size_t i = 0; i < nr; i++)
        if (safedir_within(out, run_list[i]) && cmd_holds_run(run_list[i]))
            return args_usage_error("--out: %s would put the report into %s, one of the "
                                    "runs merged (accepted: a directory outside every run "
                                    "given)", out, run_list[i]);
    /* one writer at a time, like train and compare: two reports of one directory would
     * remove and draw each other's traces and figures */
    char err[ARGS_ERR_MAX];
    runlock lock = {-1};
    int rc = afile_mkdirs(out, err, sizeof err);
    if (rc != 0)
        return args_run_error("--out: %s", err);
    rc = runlock_take(&lock, out, err, sizeof err);
    if (rc != 0)
        return args_run_error(rc == RUNLOCK_IN_USE ? "%s; wait for it to end, or choose "
                              "another --out" : "--out: %s", err);
    rc = merge_runs(nr, out);
    runlock_release(&lock);
    return rc;
}

/* ---- help and version ------------------------------------------------------------------ */

static void help_main(void)
{
    /* the question of the toolkit, named after the first model without attention */
    const char *plain = "recurrent model";
    for (size_t k = 0; model_registry[k]; k++)
        if (!model_registry[k]->attends) {
            plain = model_registry[k]->title ? model_registry[k]->title
                                             : model_registry[k]->name;
            break;
        }
    const char *first = model_registry[0]->name;
    printf(
        "attnlab — why attention replaced the %s, in C you can read next to the equations\n"
        "\n"
        "Usage: attnlab COMMAND [FLAGS]   (attnlab COMMAND --help for each)\n"
        "\n"
        "Commands:\n"
        "  train       train one model on one task; writes a run directory\n"
        "  eval        greedy-decoding accuracy of a checkpoint per length, or on your input\n"
        "  gradcheck   compare a model's backward pass with finite differences\n"
        "  attention   print and save the attention maps (or gates) of one example\n"
        "  compare     train every model x seed on one task, then tables and figures\n"
        "  report      merge finished runs: tables, figures, report.html\n"
        "  bench       training and decoding speed, FLOP rate and memory of each model\n"
        "  help        this text; 'attnlab help models' and 'attnlab help tasks'\n"
        "  --version   version, compiler flags and the BLAS in use\n"
        "\n"
        "Models: %s\nTasks:  %s\n"
        "\n"
        "Examples:\n"
        "  attnlab train --model %s --task copy --train-len 4:8 --steps 3000 --out runs/%s\n"
        "  attnlab eval --checkpoint runs/%s/model.ckpt --lengths 4:32:4\n"
        "  attnlab gradcheck --model %s\n"
        "\n"
        "Exit status: 0 success, 1 runtime error, 2 usage error.\n",
        plain, model_names(), task_names(), first, first, first, first);
}

/* A command: its word, what runs it, and its --help (NULL: no help topic). */
typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*help)(void);
} command;

static int cmd_help(int argc, char **argv);

static const command commands[] = {
    {"train", cmd_train, cmd_train_help},
    {"eval", cmd_eval, cmd_eval_help},
    {"gradcheck", cmd_gradcheck, cmd_gradcheck_help},
    {"attention", cmd_attention, cmd_attention_help},
    {"compare", cmd_compare, cmd_compare_help},
    {"report", cmd_report, cmd_report_help},
    {"bench", cmd_bench, cmd_bench_help},
    {"help", cmd_help, NULL},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* attnlab help [TOPIC]: the overview, a command's --help, the models or the tasks. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        help_main();
        return 0;
    }
    const char *topic = argv[1];
    if (strcmp(topic, "models") == 0) {
        for (size_t k = 0; model_registry[k]; k++)
            printf("%-14s %s\n", model_registry[k]->name, model_registry[k]->about);
        return 0;
    }
    if (strcmp(topic, "tasks") == 0) {
        for (size_t k = 0; task_at(k); k++)
            printf("%-14s %s\n", task_at(k)->name, task_at(k)->about);
        printf("%-14s %s\n", TASK_FILE_PREFIX "PATH",
               "your own data: one example a line, SOURCE<TAB>TARGET, each a list of\n"
               "               words separated by spaces (docs/labs/08-your-own-data.md)");
        return 0;
    }
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (commands[k].help && strcmp(topic, commands[k].name) == 0) {
            commands[k].help();
            return 0;
        }
    return args_usage_error("no help on '%s' (accepted: train, eval, gradcheck, attention, "
                            "compare, report, bench, models, tasks)", topic);
}

static int cmd_version(void)
{
    char path[1024];
    const char *blas = buildinfo_blas(path, sizeof path);
    printf("attnlab %s\n", buildinfo_version());
    printf("compiler: %s\n", buildinfo_compiler());
    printf("flags:    %s\n", buildinfo_cflags());
    printf("BLAS:     %s%s%s%s\n", blas, path[0] ? " (" : "", path, path[0] ? ")" : "");
    /* results agree to the bit only on the same kernel (docs/reliability.md) */
    printf("kernel:   %s\n", buildinfo_blas_core());
    return 0;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

int cli_check_train_args(int argc, char **argv)
{
    args_set_command("attnlab train");
    return cmd_train_check(argc, argv);
}

int cli_main(int argc, char **argv)
{
    /* how compare finds this program again where there is no /proc */
    buildinfo_set_argv0(argc > 0 ? argv[0] : NULL);
    /* one BLAS thread unless --threads says otherwise: runs side by side beat threads */
    buildinfo_set_threads(1);
    /* a model's report of bad input becomes a runtime error, never an abort */
    model_catch_errors();
    if (argc < 2)
        return args_usage_error("no command given (accepted: train, eval, gradcheck, "
                                "attention, compare, report, bench, help, --version)");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0)
        return cmd_version();
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        help_main();
        return 0;
    }
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(cmd, commands[k].name) == 0) {
            char name[64];
            snprintf(name, sizeof name, "attnlab %s", cmd);
            args_set_command(name);
            return commands[k].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "attnlab: unknown command '%s' (accepted: train, eval, gradcheck, "
            "attention, compare, report, bench, help, --version)\nTry 'attnlab --help'.\n", cmd);
    return ARGS_EXIT_USAGE;
}
