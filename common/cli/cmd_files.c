/* cmd_files.c — the files and folders several commands share: a file of a run written
 * whole, whether a directory holds a run, the claim of an --out directory, a word of a
 * shell command (see cmd_files.h).
 *
 * Design. Every file goes through afile.h (a temporary name, then a rename), so an
 * interrupted command never leaves half a file; every directory a command writes its own
 * files into is held by its lock (runlock.h) from before the first file to the end.
 * Errors are printed here, as one line (args.h), and the caller gets the status.
 */
#include "cmd_files.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/afile.h"
#include "args.h"
#include "buildinfo.h"
#include "runlock.h"

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

/* manifest.tsv of a measuring command: the command line as typed (argv[0] the command's
 * name), then the build facts, key<TAB>value. */
typedef struct manifest_line {
    int argc;
    char **argv;
} manifest_line;

void cmd_shell_command(FILE *f, int argc, char **argv)
{
    fputs("attnlab", f);
    for (int i = 0; i < argc; i++) {
        fputc(' ', f);
        cmd_shell_word(f, argv[i]);
    }
}

void cmd_manifest_head(FILE *f, int argc, char **argv)
{
    fputs("key\tvalue\ncommand\t", f);
    cmd_shell_command(f, argc, argv);
    fputc('\n', f);
    buildinfo_write_tsv(f);
}

static int write_manifest(FILE *f, const void *ctx)
{
    const manifest_line *m = ctx;
    cmd_manifest_head(f, m->argc, m->argv);
    return ferror(f) ? -1 : 0;
}

int cmd_write_manifest(const char *dir, int argc, char **argv)
{
    const manifest_line m = {argc, argv};
    return cmd_write_file(dir, "manifest.tsv", write_manifest, &m);
}
