/* fuzz_args.c — libFuzzer harness for the command line of every command: train, eval,
 * compare, report, bench, attention, gradcheck, and the args.txt that train --resume
 * reads back. Each line must be accepted or refused with one usage message (status 2),
 * never crash; nothing is trained, written or started.
 *
 * Input. The first byte picks the command: 't' train, 'e' eval, 'c' compare, 'r' report,
 * 'b' bench, 'a' attention, 'g' gradcheck, 'f' an args.txt file; any other byte picks
 * entry (byte % 8) of the table below. The rest is split at NUL bytes into the
 * arguments of the command (at most FUZZ_ARGS_MAX), or, for 'f', is the file itself.
 *
 * How each command is parsed without running it:
 *   train, eval, attention, gradcheck, bench
 *              their parse-only entries (cli_check_train_args, cmd_eval_check, ...): the
 *              reading of the command line each command itself makes, stopping where its
 *              work (the run directory, the checkpoint, the model, the measurement)
 *              would start.
 *   compare    cmd_compare itself with --print-jobs first: it parses, builds the job list
 *              and prints it, and returns before any directory or process is made
 *              (--print-jobs comes first so no flag can take it as its value).
 *   report     cmd_report itself, each argument that is not a flag placed under
 *              /dev/null/ so no path names a directory: every flag is read, and the
 *              command ends at its first stat, before anything is merged or written.
 *   args.txt   cmd_train --resume DIR, where DIR (made here, empty but for args.txt)
 *              holds no checkpoint.ckpt: read_args and parse_train read the file, and the
 *              command ends at the missing checkpoint, status 1, before any write.
 * Standard output (the help texts, compare's job list) goes to /dev/null meanwhile.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/cli/cli.h"
#include "../../common/cli/args.h"
#include "../../common/cli/cmd.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ARGS_MAX 512 /* arguments taken from one input (above report's 256 paths) */
#define FUZZ_ARGS_SKIP (-1) /* the harness itself could not run the input (memory, /tmp) */

/* ---- the commands run as themselves --------------------------------------------------- */

/* cmd_compare with --print-jobs first (see the design above). */
static int fuzz_args_compare(int argc, char **argv)
{
    static char print_jobs[] = "--print-jobs";
    char **v = malloc(((size_t)argc + 2) * sizeof *v);
    if (!v)
        return FUZZ_ARGS_SKIP;
    v[0] = argv[0];
    v[1] = print_jobs;
    memcpy(v + 2, argv + 1, (size_t)argc * sizeof *v); /* argv[1..argc-1] and the NULL */
    int rc = cmd_compare(argc + 1, v);
    free(v);
    return rc;
}

/* cmd_report with every operand under /dev/null/, which no path can resolve through:
 * stat fails on each, so the command never reaches the merge. */
static int fuzz_args_report(int argc, char **argv)
{
    static const char prefix[] = "/dev/null/";
    char **v = calloc((size_t)argc + 1, sizeof *v);
    int rc = FUZZ_ARGS_SKIP;
    if (!v)
        return FUZZ_ARGS_SKIP;
    v[0] = argv[0];
    int k = 1;
    for (; k < argc; k++) {
        if (argv[k][0] == '-') {
            v[k] = argv[k];
            continue;
        }
        v[k] = malloc(sizeof prefix + strlen(argv[k]));
        if (!v[k])
            goto done;
        strcpy(v[k], prefix);
        strcat(v[k], argv[k]);
    }
    rc = cmd_report(argc, v); /* 1 (no operand is a directory), 2, or 0 after --help */
done:
    for (int i = 1; i < k; i++)
        if (v[i] != argv[i])
            free(v[i]);
    free(v);
    return rc;
}

/* The directory holding the args.txt of 'f' inputs (one per process, removed at exit). */
static char fuzz_args_dir[256];
static char fuzz_args_file[300];

static void fuzz_args_remove_dir(void)
{
    unlink(fuzz_args_file);
    rmdir(fuzz_args_dir);
}

/* cmd_train --resume DIR with text (n bytes) as DIR/args.txt. */
static int fuzz_args_resume(const uint8_t *text, size_t n)
{
    if (!fuzz_args_dir[0]) {
        snprintf(fuzz_args_dir, sizeof fuzz_args_dir, "%s/attnlab-fuzz-args-XXXXXX",
                 fuzz_scratch_dir());
        if (!mkdtemp(fuzz_args_dir)) {
            fuzz_args_dir[0] = '\0';
            return FUZZ_ARGS_SKIP;
        }
        snprintf(fuzz_args_file, sizeof fuzz_args_file, "%s/args.txt", fuzz_args_dir);
        atexit(fuzz_args_remove_dir);
    }
    FILE *f = fopen(fuzz_args_file, "wb");
    if (!f)
        return FUZZ_ARGS_SKIP;
    fwrite(text, 1, n, f);
    fclose(f);
    static char train[] = "train", resume[] = "--resume";
    char *v[] = {train, resume, fuzz_args_dir, NULL};
    return cmd_train(3, v); /* no checkpoint.ckpt beside it: 1, or 2 for args.txt */
}

/* ---- the input -------------------------------------------------------------------------- */

typedef int (*fuzz_args_command)(int argc, char **argv);

/* The commands in the order byte % 8 picks them; 'f' (args.txt) is the last. */
static const struct {
    char key;
    const char *name;
    fuzz_args_command parse; /* NULL: the args.txt of --resume */
    unsigned statuses;       /* bit s set: status s is a right answer */
} fuzz_args_commands[] = {
    /* parsing alone: valid or --help (0), or a usage error (2) */
    {'t', "train", cli_check_train_args, 1u << 0 | 1u << 2},
    {'e', "eval", cmd_eval_check, 1u << 0 | 1u << 2},
    {'c', "compare", fuzz_args_compare, 1u << 0 | 1u << 2},
    /* ends at a path that is not a directory (1), or --help (0), or a usage error (2) */
    {'r', "report", fuzz_args_report, 1u << 0 | 1u << 1 | 1u << 2},
    {'b', "bench", cmd_bench_check, 1u << 0 | 1u << 2},
    {'a', "attention", cmd_attention_check, 1u << 0 | 1u << 2},
    {'g', "gradcheck", cmd_gradcheck_check, 1u << 0 | 1u << 2},
    /* ends at the missing checkpoint.ckpt (1; also --help in args.txt), or 2 */
    {'f', "train", NULL, 1u << 1 | 1u << 2},
};
#define FUZZ_ARGS_N_COMMANDS (sizeof fuzz_args_commands / sizeof fuzz_args_commands[0])

/* Runs the command picked by the first byte on the rest. Returns its status, and in
 * *statuses the ones it may give. */
static int fuzz_args_run(const uint8_t *data, size_t size, unsigned *statuses)
{
    size_t pick = data[0] % FUZZ_ARGS_N_COMMANDS;
    for (size_t k = 0; k < FUZZ_ARGS_N_COMMANDS; k++)
        if (data[0] == (uint8_t)fuzz_args_commands[k].key)
            pick = k;
    char name[64];
    snprintf(name, sizeof name, "attnlab %s", fuzz_args_commands[pick].name);
    args_set_command(name);
    *statuses = fuzz_args_commands[pick].statuses;
    data++, size--;
    if (!fuzz_args_commands[pick].parse)
        return fuzz_args_resume(data, size);

    char *copy = malloc(size + 1), *argv[FUZZ_ARGS_MAX + 2];
    if (!copy)
        return FUZZ_ARGS_SKIP;
    memcpy(copy, data, size);
    copy[size] = '\0';
    int argc = 0;
    static char word[16];
    snprintf(word, sizeof word, "%s", fuzz_args_commands[pick].name);
    argv[argc++] = word;
    for (size_t i = 0; size > 0 && i <= size && argc <= FUZZ_ARGS_MAX;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    argv[argc] = NULL;
    const int rc = fuzz_args_commands[pick].parse(argc, argv);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* the help texts and compare's job list: printed, but not onto the terminal */
    fflush(stdout);
    const int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, STDOUT_FILENO);
    unsigned statuses = 0;
    const int rc = fuzz_args_run(data, size, &statuses);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (null >= 0)
        close(null);
    if (rc != FUZZ_ARGS_SKIP && (rc < 0 || rc > 2 || !(statuses >> rc & 1u)))
        abort(); /* a status the command does not promise for a command line */
    return 0;
}
