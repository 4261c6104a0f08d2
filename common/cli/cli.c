/* cli.c — the attnlab command line: dispatch, help and --version.
 *
 * Design. cli_main picks the command by its first word from one table and hands it the
 * rest of argv; each command lives in a file of its own, cmd_NAME.c (cmd.h lists them),
 * and reads its flags with args.h, so that a flag, a number or a list means the same in
 * every command.
 *
 * Errors. A usage error prints one line naming the flag and what is accepted, then the
 * hint "Try 'attnlab CMD --help'.", and exits 2. A runtime error prints one line saying
 * what failed and what to do, and exits 1. Nothing already written is touched.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "buildinfo.h"
#include "cmd.h"
#include "../core/model.h"
#include "../core/task.h"

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
