/* traindir.c — the run directory of attnlab train: the lock, what the directory
 * already holds, args.txt, and the agreement --resume demands (see traindir.h).
 *
 * Design. Three records of one configuration live in a run directory: args.txt (the
 * command, from which --resume rebuilds everything), config.tsv (every setting, written
 * when the run began) and the configuration stored inside checkpoint.ckpt. They are
 * compared field by field through config_format, the one text form of every field that
 * round-trips exactly, so "differs" means what config.tsv would show.
 */
#include "traindir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/afile.h"
#include "args.h"
#include "../core/checkpoint.h"
#include "cmd_files.h"
#include "safedir.h"
#include "../core/infile.h"

/* Bytes of a config.tsv read back: a few hundred in practice. */
#define CONFIG_TSV_MAX (1 << 20)

/* ---- configurations ----------------------------------------------------------------------- */

/* Reads dir/config.tsv over the generic defaults into c. Returns 0, or -1 with one line
 * in why (n bytes) when it is missing, cannot be read (a FIFO or a directory is refused,
 * never waited on) or is not a configuration. */
static int read_config_tsv(const char *dir, config *c, char *why, size_t n)
{
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    if (afile_join(path, sizeof path, dir, "config.tsv") != 0) {
        snprintf(why, n, "%s/config.tsv: path too long", dir);
        return -1;
    }
    char *text = infile_read(path, CONFIG_TSV_MAX, NULL, why, n);
    if (!text)
        return -1;
    config_defaults(c);
    const int bad = config_read_text(c, text, err, sizeof err);
    free(text);
    if (bad)
        snprintf(why, n, "%.300s is not a configuration: %.180s", path, err);
    return bad ? -1 : 0;
}

/* The first field in which a and b differ: its index into config_fields, with the flag
 * spelling in flag and the two values in va and vb; -1 when they agree on every field. */
static long first_difference(const config *a, const config *b, char *flag, char *va,
                             char *vb, size_t n)
{
    for (size_t k = 0; k < config_n_fields; k++) {
        config_format(a, &config_fields[k], va, n);
        config_format(b, &config_fields[k], vb, n);
        if (strcmp(va, vb) != 0) {
            config_flag_name(&config_fields[k], flag, n);
            return (long)k;
        }
    }
    return -1;
}

/* ---- claiming the directory ------------------------------------------------------------------ */

/* The files a run writes, the mark of a finished run (eval.tsv) first: removed in this
 * order by --force. */
static const char *const run_files[] = {"eval.tsv",      "eval_positions.tsv", "eval_bleu.tsv",
                                        "model.ckpt",    "last.ckpt",          "best.ckpt",
                                        "checkpoint.ckpt", "build.tsv",        "cost.tsv",
                                        "train_log.tsv", "config.tsv",         "args.txt"};
#define N_RUN_FILES (sizeof run_files / sizeof run_files[0])

/* Removes dir/name unless it is already gone. Returns 0, or -1 after the message. */
static int remove_in(const char *dir, const char *name)
{
    char path[AFILE_PATH_MAX];
    if (afile_join(path, sizeof path, dir, name) != 0) {
        args_run_error("%s/%s: path too long", dir, name);
        return -1;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        args_run_error("--force: cannot remove %s: %s (nothing of the new run was written)",
                       path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes the files of the earlier run in dir (--force), the tables in trace/ included:
 * each by its own entry, never through a link (safedir.h). */
static int clear_run(const char *dir)
{
    char err[ARGS_ERR_MAX];
    for (size_t k = 0; k < N_RUN_FILES; k++)
        if (remove_in(dir, run_files[k]) != 0)
            return -1;
    if (safedir_clear(dir, "trace", 0, ".tsv", err, sizeof err) != 0) {
        args_run_error("--force: %s", err);
        return -1;
    }
    return 0;
}

/* Refuses the run in dir that a new run would replace: says what it is and how to go
 * on. Returns the runtime status. */
static int refuse_replacing(const char *dir, const config *c)
{
    if (!cmd_exists_in(dir, "model.ckpt") && !cmd_exists_in(dir, "eval.tsv"))
        return args_run_error("%s holds a stopped run (checkpoint.ckpt); resume it with "
                              "'attnlab train --resume %s', or add --force to start again",
                              dir, dir);
    config old;
    char flag[CONFIG_VALUE_MAX], here[CONFIG_VALUE_MAX], there[CONFIG_VALUE_MAX];
    char why[ARGS_ERR_MAX];
    if (read_config_tsv(dir, &old, why, sizeof why) != 0)
        return args_run_error("%s holds a finished run (model.ckpt or eval.tsv); choose "
                              "another --out, or add --force to replace it", dir);
    if (first_difference(&old, c, flag, there, here, sizeof flag) >= 0)
        return args_run_error("%s holds a finished run of another configuration (--%s %s "
                              "there, %s here); choose another --out, or add --force to "
                              "replace it", dir, flag, there, here);
    return args_run_error("%s holds a finished run of this configuration; choose another "
                          "--out, or add --force to train it again", dir);
}

int traindir_claim(runlock *l, const char *dir, const config *c, int force)
{
    char err[ARGS_ERR_MAX];
    l->fd = -1;
    if (afile_mkdirs(dir, err, sizeof err) != 0)
        return args_run_error("--out: %s", err);
    const int locked = runlock_take(l, dir, err, sizeof err);
    if (locked == RUNLOCK_IN_USE)
        return args_run_error("%s; wait for it to end, or choose another --out", err);
    if (locked != 0)
        return args_run_error("--out: %s", err);
    /* the run writes its trace/ (and --force empties it): never through a link */
    if (safedir_check(dir, "trace", err, sizeof err) != 0) {
        runlock_release(l);
        return args_run_error("--out: %s", err);
    }
    const int taken = cmd_exists_in(dir, "model.ckpt") || cmd_exists_in(dir, "eval.tsv") ||
                      cmd_exists_in(dir, "checkpoint.ckpt");
    int rc = 0;
    if (taken && !force)
        rc = refuse_replacing(dir, c);
    else if (taken && clear_run(dir) != 0)
        rc = ARGS_EXIT_RUNTIME;
    if (rc)
        runlock_release(l);
    return rc;
}

int traindir_lock_existing(runlock *l, const char *dir)
{
    char err[ARGS_ERR_MAX];
    struct stat st;
    l->fd = -1;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return args_run_error("--resume: %s is not a directory (give the --out of the run "
                              "to continue)", dir);
    const int locked = runlock_take(l, dir, err, sizeof err);
    if (locked != 0)
        return args_run_error("--resume: %s%s", err,
                              locked == RUNLOCK_IN_USE ? "; wait for it to end" : "");
    if (safedir_check(dir, "trace", err, sizeof err) != 0) {
        runlock_release(l);
        return args_run_error("--resume: %s", err);
    }
    return 0;
}

/* ---- args.txt ---------------------------------------------------------------------------- */

/* The arguments of a train command, one per line. */
typedef struct command_text {
    int argc;
    char **argv;
} command_text;

static int write_args(FILE *f, const void *ctx)
{
    const command_text *t = ctx;
    for (int i = 1; i < t->argc; i++)
        fprintf(f, "%s\n", t->argv[i]);
    return ferror(f) ? -1 : 0;
}

int traindir_write_args(const char *dir, int argc, char **argv)
{
    command_text t = {argc, argv};
    return cmd_write_file(dir, "args.txt", write_args, &t);
}

int traindir_read_args(const char *dir, char ***argv_out, char **text, char *err, size_t en)
{
    char path[AFILE_PATH_MAX];
    size_t len;
    *text = NULL;
    if (afile_join(path, sizeof path, dir, "args.txt") != 0) {
        if (err && en)
            snprintf(err, en, "%s/args.txt: path too long", dir);
        return -1;
    }
    if (!(*text = infile_read(path, CONFIG_TSV_MAX, &len, err, en)))
        return -1;
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += (*text)[i] == '\n';
    char **v = calloc(n + 2, sizeof *v);
    if (!v) {
        free(*text);
        *text = NULL;
        if (err && en)
            snprintf(err, en, "%s: out of memory", path);
        return -1;
    }
    int k = 0;
    static char train_word[] = "train";
    v[k++] = train_word;
    /* one argument per line; a NUL inside the file ends the text afile_read gave */
    for (char *p = *text, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        v[k++] = p;
    }
    v[k] = NULL;
    *argv_out = v;
    return k;
}

char *traindir_restart_command(const char *dir)
{
    char **v, *text, *out = NULL;
    size_t len = 0;
    const int n = traindir_read_args(dir, &v, &text, NULL, 0);
    if (n < 0)
        return NULL;
    FILE *f = open_memstream(&out, &len);
    if (f) {
        fputs("attnlab train", f);
        for (int i = 1; i < n; i++) {
            /* the run's --out, wherever it pointed then, becomes dir */
            if (strcmp(v[i], "--out") == 0) {
                i++;
                continue;
            }
            if (strncmp(v[i], "--out=", 6) == 0)
                continue;
            fputc(' ', f);
            cmd_shell_word(f, v[i]);
        }
        fputs(" --out ", f);
        cmd_shell_word(f, dir);
        if (fclose(f) != 0) {
            free(out);
            out = NULL;
        }
    }
    free(v);
    free(text);
    return out;
}

int traindir_not_started(const char *dir)
{
    char *again = traindir_restart_command(dir);
    int rc;
    if (again)
        rc = args_run_error("--resume: the run in %s stopped before its first checkpoint, so "
                            "there is nothing to resume; start it again with: %s", dir, again);
    else
        rc = args_run_error("--resume: the run in %s stopped before its first checkpoint, so "
                            "there is nothing to resume; start it again with its attnlab "
                            "train command", dir);
    free(again);
    return rc;
}

/* ---- what --resume checks --------------------------------------------------------------- */

/* Compares c with the configuration of the run in dir (its config.tsv, read into run).
 * Returns 0 with flag[0] == '\0' when they agree; 0 with the first differing setting in
 * flag and its values (c's in a, the run's in b; each CONFIG_VALUE_MAX bytes) when they do
 * not; or the runtime status after one line when config.tsv cannot be read. */
static int differs_from_run(const char *dir, const config *c, config *run, char *flag, char *a,
                            char *b)
{
    char why[ARGS_ERR_MAX];
    flag[0] = '\0';
    if (read_config_tsv(dir, run, why, sizeof why) != 0)
        return args_run_error("--resume: %s; start the run again with --force", why);
    first_difference(c, run, flag, a, b, CONFIG_VALUE_MAX);
    return 0;
}

int traindir_check_args(const char *dir, const config *from_args)
{
    config run;
    char flag[CONFIG_VALUE_MAX], a[CONFIG_VALUE_MAX], b[CONFIG_VALUE_MAX];
    const int rc = differs_from_run(dir, from_args, &run, flag, a, b);
    if (rc != 0)
        return rc;
    if (from_args->data_crc != run.data_crc) /* the file read again is not the run's */
        return args_run_error("--resume: the data file of %s has changed since the run "
                              "began (CRC-32 %lu, the run's %lu); put the file back, or start "
                              "the run again with --force", run.task, from_args->data_crc,
                              run.data_crc);
    if (!flag[0])
        return 0;
    return args_run_error("--resume: %s/args.txt gives --%s %s, but the run began with %s "
                          "(its config.tsv): args.txt was changed; put it back, or start the "
                          "run again with --force", dir, flag, a, b);
}

int traindir_check_checkpoint(const char *dir, const config *stored)
{
    config run;
    char flag[CONFIG_VALUE_MAX], a[CONFIG_VALUE_MAX], b[CONFIG_VALUE_MAX];
    const int rc = differs_from_run(dir, stored, &run, flag, a, b);
    if (rc != 0 || !flag[0])
        return rc;
    return args_run_error("--resume: %s/checkpoint.ckpt is not this run's: it holds --%s %s, "
                          "the run's config.tsv %s; put the run's own checkpoint back, or "
                          "start the run again with --force", dir, flag, a, b);
}

/* The longest line of a train_log.tsv read back: a dozen numbers. */
#define LOG_LINE_MAX 4096

double traindir_restore_log(const char *dir, size_t step, FILE *log, train_best *best,
                            const config *c)
{
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    if (afile_join(path, sizeof path, dir, "train_log.tsv") != 0) {
        args_run_error("--resume: %s/train_log.tsv: path too long", dir);
        return -1;
    }
    /* the last row the log of this checkpoint must hold: the last validation at or
     * before its step (0: none yet, the log may be missing) */
    size_t want = step;
    while (want > 0 && !train_validates_at(c, want))
        want--;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        if (want == 0)
            return 0; /* no log yet: nothing to copy */
        args_run_error("--resume: %s is missing, but checkpoint.ckpt is at step %zu (the log "
                       "must reach step %zu); put the run's log back, or start the run again "
                       "with --force", path, step, want);
        return -1;
    }
    FILE *f = infile_open(path, 0, err, sizeof err); /* a FIFO is refused, never waited on */
    if (!f) {
        args_run_error("--resume: %s; put the run's log back, or start the run again with "
                       "--force", err);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    double seconds = 0;
    int first = 1;
    double *w = best->w;
    best->w = NULL; /* the replay decides which step is best, not its weights */
    ssize_t got;
    while ((got = infile_getline(&line, &cap, LOG_LINE_MAX, f, path, err, sizeof err)) > 0) {
        if (first) { /* the header: already written */
            first = 0;
            continue;
        }
        unsigned long long s;
        double sec, skip, vloss, vtok;
        if (sscanf(line, "%llu\t%lf", &s, &sec) != 2 || s > step)
            break;
        fputs(line, log);
        seconds = sec;
        if (s == want)
            want = 0; /* reached */
        /* columns 9 and 10: val_loss, val_token_acc (train.h) */
        if (sscanf(line, "%llu\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf", &s, &sec, &skip,
                   &skip, &skip, &skip, &skip, &skip, &vloss, &vtok) == 10)
            train_val_update(best, c, (size_t)s, sec, vtok, vloss, NULL, 0);
    }
    best->w = w;
    free(line);
    fclose(f);
    if (got == INFILE_FAIL || got == INFILE_LONG) { /* never taken for the log's end */
        if (got == INFILE_LONG)
            args_run_error("--resume: %s: a line longer than %d bytes, not a log of train; "
                           "put the run's log back, or start the run again with --force",
                           path, LOG_LINE_MAX);
        else
            args_run_error("--resume: %s; put the run's log back, or start the run again "
                           "with --force", err);
        return -1;
    }
    if (want > 0) {
        args_run_error("--resume: %s ends before step %zu, the last it must hold for "
                       "checkpoint.ckpt at step %zu; put the run's log back, or start the run "
                       "again with --force", path, want, step);
        return -1;
    }
    return seconds;
}

void traindir_restore_best(const char *dir, double *w, size_t n)
{
    char path[AFILE_PATH_MAX], err[ARGS_ERR_MAX];
    afile_join(path, sizeof path, dir, "best.ckpt");
    if (access(path, F_OK) != 0)
        return;
    model *b = ckpt_load(path, NULL, err, sizeof err);
    if (b && b->params.size == n)
        memcpy(w, b->params.data, n * sizeof *w);
    if (b)
        b->ops->free(b);
}

int traindir_stage_weights(afile *af, model *m, const double *w, const char *dir,
                           const char *name, char *err, size_t n)
{
    char path[AFILE_PATH_MAX];
    arena *p = &m->params;
    double *own = malloc(p->size * sizeof *own);
    if (!own) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    memcpy(own, p->data, p->size * sizeof *own);
    memcpy(p->data, w, p->size * sizeof *own);
    afile_join(path, sizeof path, dir, name);
    int rc = ckpt_stage(af, path, m, NULL, err, n);
    memcpy(p->data, own, p->size * sizeof *own);
    free(own);
    return rc;
}
