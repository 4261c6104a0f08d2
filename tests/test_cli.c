/* test_cli.c — the attnlab program seen from outside: exit statuses, the one-line
 * messages of usage and runtime errors, the files a run writes, and the commands that
 * read them back (eval, eval --input, attention). Runs the built program (the path in
 * $ATTNLAB, default build/attnlab) in a child process (testcli.h); the defaults that
 * come from the model registry are also checked in-process. Interruption, resuming and
 * the ownership of run directories are in test_cli_runs.c, compare in test_compare.c. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cli/cli.h"
#include "../common/cli/args.h"
#include "../common/cli/cmd_measure.h"
#include "../common/core/config.h"
#include "../common/core/model.h"
#include "testcli.h"
#include "testutil.h"

/* ---- usage errors: status 2, one line naming the problem, then the hint ------------- */

typedef struct bad_case {
    const char *args[12];
    int status;
    const char *must_say; /* a word the first line of the message must contain */
} bad_case;

static const bad_case bad_cases[] = {
    {{"train", "--steps", "abc", NULL}, 2, "--steps"},
    {{"train", "--steps", "12x", NULL}, 2, "12x"},
    {{"train", "--steps", "-3", NULL}, 2, "--steps"},
    {{"train", "--steps", "99999999999999999999999", NULL}, 2, "out of range"},
    {{"train", "--batch", "0", NULL}, 2, "--batch"},
    {{"train", "--batch", "", NULL}, 2, "--batch"},
    {{"train", "--hidden", "0", NULL}, 2, "--hidden"},
    {{"train", "--lr", "fast", NULL}, 2, "--lr"},
    {{"train", "--lr", "-0.1", NULL}, 2, "--lr"},
    {{"train", "--lr", "nan", NULL}, 2, "--lr"},
    {{"train", "--model", "nope", NULL}, 2, "nope"},
    {{"train", "--task", "sort", NULL}, 2, "sort"},
    {{"train", "--train-len", "9:4", NULL}, 2, "--train-len"},
    {{"train", "--train-len", "4:x", NULL}, 2, "--train-len"},
    {{"train", "--train-len", "0:4", NULL}, 2, "--train-len"},
    {{"train", "--train-len", "4:100000", NULL}, 2, "--train-len"},
    {{"train", "--frobnicate", NULL}, 2, "--frobnicate"},
    {{"train", "--lr", NULL}, 2, "--lr"},
    {{"train", "stray", NULL}, 2, "stray"},
    {{"train", "--cell", "rnn", NULL}, 2, "--cell"},
    {{"train", "--seed", "4294967296", NULL}, 2, "--seed"},
    {{"train", "--threads", "0", NULL}, 2, "--threads"},
    {{"train", "--eval-lengths", "8:4", NULL}, 2, "--eval-lengths"},
    {{"train", "--samples", "0", NULL}, 2, "--samples"},
    {{"eval", NULL}, 2, "--checkpoint"},
    {{"eval", "--checkpoint", "x.ckpt", "--hidden", "5", NULL}, 2, "--hidden"},
    {{"eval", "--checkpoint", "x.ckpt", "--lengths", "0:4", NULL}, 2, "--lengths"},
    {{"gradcheck", "--model", "nope", NULL}, 2, "nope"},
    {{"gradcheck", "--stride", "0", NULL}, 2, "--stride"},
    {{"attention", "--input", "1 2", NULL}, 2, "--checkpoint"},
    {{"help", "nothing", NULL}, 2, "nothing"},
    {{"frobnicate", NULL}, 2, "frobnicate"},
    /* a flag given twice: the last value wins only when every value is valid */
    {{"train", "--steps", "abc", "--steps", "2", NULL}, 2, "abc"},
    {{"train", "--model", "nope", "--model", "lstm", NULL}, 2, "nope"},
    {{"train", "--samples", "0", "--samples", "4", NULL}, 2, "--samples"},
    {{"train", "--eval-lengths", "0:4", "--eval-lengths", "8", NULL}, 2, "--eval-lengths"},
    {{"compare", "--preset", "huge", "--preset", "smoke", "--print-jobs", NULL}, 2, "huge"},
    {{"compare", "--seeds", "0", "--seeds", "2", "--print-jobs", NULL}, 2, "--seeds"},
    /* lists without empty items; models each once; paths not empty */
    {{"train", "--eval-lengths", "1,,2", NULL}, 2, "--eval-lengths"},
    {{"train", "--eval-lengths", "4,", NULL}, 2, "--eval-lengths"},
    {{"compare", "--models", "lstm,lstm", "--print-jobs", NULL}, 2, "twice"},
    {{"compare", "--models", "lstm,,transformer", "--print-jobs", NULL}, 2, "--models"},
    {{"train", "--out", "", NULL}, 2, "--out"},
    {{"report", "--out", "", "/tmp", NULL}, 2, "--out"},
    {{"eval", "--checkpoint", "", NULL}, 2, "--checkpoint"},
    {{"train", "--resume", "x", "--force", NULL}, 2, "--resume"},
    /* a path-valued flag followed by another flag: the flag is not taken for its path */
    {{"train", "--out", "--force", "--steps", "0", NULL}, 2, "--out: '--force' is a flag"},
    {{"train", "--resume", "--quiet", NULL}, 2, "--resume: '--quiet' is a flag"},
    {{"eval", "--checkpoint", "--lengths", "4", NULL}, 2, "--checkpoint: '--lengths' is a flag"},
    {{"eval", "--checkpoint", "x.ckpt", "--input", "--out", "d", NULL}, 2, "--input: '--out'"},
    /* real settings read numbers as the integers do: decimal only */
    {{"train", "--lr", "0x1p-3", "--steps", "0", NULL}, 2, "--lr: '0x1p-3' is not a number"},
    {{"train", "--lr", " 0.001", "--steps", "0", NULL}, 2, "--lr: ' 0.001' is not a number"},
    {{"train", "--clip", "+1", "--steps", "0", NULL}, 2, "--clip: '+1' is not a number"},
    {{"train", "--lr", "inf", NULL}, 2, "--lr: 'inf' is not a number"},
    {{"train", "--steps", "0x10", NULL}, 2, "--steps: '0x10' is not a whole number"},
    {{"eval", "--checkpoint", "/nonexistent/model.ckpt", NULL}, 1, "/nonexistent/model.ckpt"},
    {{"eval", "--checkpoint", "/tmp", NULL}, 1, "/tmp"},
};

START_TEST(bad_input_is_named)
{
    const bad_case *c = &bad_cases[_i];
    run_out r;
    cli_run(&r, NULL, c->args);
    ck_assert_msg(r.status == c->status, "%s %s: status %d, want %d (stderr: %s)", c->args[0],
                  c->args[1] ? c->args[1] : "", r.status, c->status, r.err);
    char first[sizeof r.err];
    memcpy(first, r.err, sizeof first);
    char *nl = strchr(first, '\n');
    if (nl)
        *nl = '\0';
    ck_assert_msg(strstr(first, c->must_say), "message '%s' does not name '%s'", first,
                  c->must_say);
    /* one line, plus the hint for usage errors */
    ck_assert_uint_eq(cli_count_lines(r.err), c->status == 2 ? 2 : 1);
    ck_assert_str_eq(r.out, "");
}
END_TEST

START_TEST(help_and_version)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"--version", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "BLAS:"));
    ck_assert_ptr_nonnull(strstr(r.out, "flags:"));
    static const char *const cmds[] = {"train", "eval", "gradcheck", "attention"};
    for (size_t k = 0; k < 4; k++) {
        cli_run(&r, NULL, (const char *const[]){cmds[k], "--help", NULL});
        ck_assert_msg(r.status == 0, "%s --help: status %d", cmds[k], r.status);
        ck_assert_ptr_nonnull(strstr(r.out, "Usage: attnlab"));
        ck_assert_ptr_nonnull(strstr(r.out, "Example"));
    }
    cli_run(&r, NULL, (const char *const[]){"help", "models", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "lstm"));
    /* no command at all: a usage error, not the help on standard output */
    cli_run(&r, NULL, (const char *const[]){NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_uint_eq(cli_count_lines(r.err), 2);
    ck_assert_msg(strstr(r.err, "attnlab: no command given") &&
                      strstr(r.err, "\nTry 'attnlab --help'.\n"),
                  "message: %s", r.err);
}
END_TEST

/* A string of n copies of c (static storage, n < 6000). */
static const char *repeat(char c, size_t n)
{
    static char buf[4][6000];
    static int next;
    char *b = buf[next++ % 4];
    memset(b, c, n);
    b[n] = '\0';
    return b;
}

START_TEST(long_values_are_refused_or_kept_whole)
{
    run_out r;
    char path[8192], want[8256];
    /* a path beyond the limit is refused, naming the limit, not cut to fit */
    snprintf(path, sizeof path, "/tmp/%s", repeat('a', 5019));
    cli_run(&r, NULL, (const char *const[]){"train", "--steps", "1", "--out", path, NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--out: the path is 5024 characters long (accepted: at most "
                             "3072)"), "message: %s", r.err);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", path, NULL});
    ck_assert_int_eq(r.status, 2);
    /* 40 models: refused (each model once), not cut to 16 runs */
    char models[512] = "";
    for (int k = 0; k < 40; k++)
        snprintf(models + strlen(models), sizeof models - strlen(models), "%s%s",
                 k ? "," : "", k % 2 ? "lstm" : "transformer");
    cli_run(&r, NULL, (const char *const[]){"compare", "--models", models, "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "is given twice"), "message: %s", r.err);
    /* a comparison directory whose runs would be too long to be run directories */
    snprintf(path, sizeof path, "/tmp/%s", repeat('c', 3060));
    cli_run(&r, NULL, (const char *const[]){"compare", "--out", path, "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "too long for the run directories"), "message: %s", r.err);
    /* one that fits: every job names it whole */
    snprintf(path, sizeof path, "/tmp/%s", repeat('d', 300));
    cli_run(&r, NULL, (const char *const[]){"compare", "--models", "lstm", "--out", path,
                                            "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 0);
    snprintf(want, sizeof want, " --out=%s/runs/lstm-s1 ", path);
    ck_assert_msg(strstr(r.out, want), "the job does not name its directory whole: %s", r.out);
    /* more flags than a command line holds: refused (in-process, the program's parser) */
    static char quiet[] = "--quiet", train[] = "train";
    char *many[ARGS_MAX_GIVEN + 3];
    many[0] = train;
    for (int k = 1; k <= ARGS_MAX_GIVEN + 1; k++)
        many[k] = quiet;
    many[ARGS_MAX_GIVEN + 2] = NULL;
    ck_assert_int_eq(cli_check_train_args(ARGS_MAX_GIVEN + 2, many), 2);
    many[ARGS_MAX_GIVEN + 1] = NULL;
    ck_assert_int_eq(cli_check_train_args(ARGS_MAX_GIVEN + 1, many), 0);
}
END_TEST

START_TEST(a_repeated_flag_keeps_its_last_value)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "quick", "--preset", "smoke",
                                            "--models", "lstm", "--steps", "7", "--steps",
                                            "9", "--samples", "3", "--samples", "5",
                                            "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, " --steps=9 "));
    ck_assert_ptr_nonnull(strstr(r.out, " --samples=5 "));
    ck_assert_ptr_nonnull(strstr(r.out, " --train-len=4:8 ")); /* smoke's, not quick's */
    ck_assert_ptr_null(strstr(r.out, "--steps=7"));
}
END_TEST

START_TEST(gradcheck_command_passes)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"gradcheck", "--model", "lstm", NULL});
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "max relative error: "));
    ck_assert_ptr_nonnull(strstr(r.out, "dec.Wh"));
}
END_TEST

/* ---- a whole run: train, then everything that reads its files --------------------- */

static char run_dir[64];

/* Trains a tiny LSTM once for the tests of this case. */
static void tiny_run(void)
{
    snprintf(run_dir, sizeof run_dir, "/tmp/attnlab-cli-run-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL,
            (const char *const[]){"train", "--model", "lstm", "--hidden", "8", "--embed", "4",
                                  "--steps", "30", "--train-len", "3:5", "--samples", "8",
                                  "--out", run_dir, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "tiny training run failed: %s", r.err);
}

static void remove_run(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(train_writes_every_file)
{
    tiny_run();
    static const char *const files[] = {"config.tsv", "build.tsv", "train_log.tsv",
                                        "model.ckpt", "eval.tsv", "eval_positions.tsv"};
    char path[256], text[4096];
    for (size_t k = 0; k < 6; k++) {
        snprintf(path, sizeof path, "%s/%s", run_dir, files[k]);
        struct stat st;
        ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "%s missing", path);
    }
    snprintf(path, sizeof path, "%s/train_log.tsv", run_dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "step\tseconds\tlr\tloss\ttoken_acc"), text);
    snprintf(path, sizeof path, "%s/eval.tsv", run_dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "model\tlen\tsamples\ttoken_acc\tseq_acc\tloss\n"), text);
    snprintf(path, sizeof path, "%s/config.tsv", run_dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "hidden\t8\n"));
    /* provenance: the source commit and whether the tree was modified, always present
     * ("unknown" without git) */
    snprintf(path, sizeof path, "%s/build.tsv", run_dir);
    cli_slurp(path, text, sizeof text);
    ck_assert_msg(strstr(text, "\ncommit\t") && !strstr(text, "\ncommit\t\n"), "%s", text);
    ck_assert_msg(strstr(text, "\nmodified\tyes\n") || strstr(text, "\nmodified\tno\n") ||
                      strstr(text, "\nmodified\tunknown\n"), "%s", text);
    /* no temporary file is left behind */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", run_dir);
    ck_assert_int_ne(system(cmd), 0);
    remove_run();
}
END_TEST

START_TEST(eval_reads_checkpoint_and_input)
{
    tiny_run();
    char ck[128];
    snprintf(ck, sizeof ck, "%s/model.ckpt", run_dir);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "3,5",
                                            "--samples", "16", NULL});
    ck_assert_msg(r.status == 0, "eval: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "token_acc"));
    /* --input: good lines answered, bad lines reported by number, status 1 */
    cli_run(&r, "3 1 4\n\n3 x 4\n1 2 12\n5 9 2 6\n",
            (const char *const[]){"eval", "--checkpoint", ck, "--input", "-", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "line 1\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "line 5\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "target:    5 9 2 6"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 2: empty line"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 3: 'x'"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 4: symbol 12"));
    ck_assert_uint_eq(cli_count_lines(r.err), 3);
    /* a NUL byte inside a line: that line is refused by number, the rest still answered */
    char in[128];
    snprintf(in, sizeof in, "%s/input.txt", run_dir);
    FILE *f = fopen(in, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite("1 2\n3 \0 4\n5\n", 1, 12, f);
    ck_assert_int_eq(fclose(f), 0);
    run_out rn;
    cli_run(&rn, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--input", in, NULL});
    ck_assert_int_eq(rn.status, 1);
    ck_assert_msg(strstr(rn.err, "line 2: a NUL byte at column 3"), "message: %s", rn.err);
    ck_assert_uint_eq(cli_count_lines(rn.err), 1);
    ck_assert_ptr_nonnull(strstr(rn.out, "line 3\n"));
    /* the loss is printed with 10 significant digits */
    const char *loss = strstr(r.out, "loss:      ");
    ck_assert_ptr_nonnull(loss);
    double v;
    ck_assert_int_eq(sscanf(loss + 11, "%lf", &v), 1);
    ck_assert(v > 0);
    /* attention on an LSTM shows its gates */
    cli_run(&r, NULL,
            (const char *const[]){"attention", "--checkpoint", ck, "--input", "1 2 3", NULL});
    ck_assert_msg(r.status == 0, "attention: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "decoded:"));
    remove_run();
}
END_TEST

START_TEST(corrupt_checkpoint_is_refused)
{
    tiny_run();
    char ck[128], bad[160], cmd[1024];
    snprintf(ck, sizeof ck, "%s/model.ckpt", run_dir);
    snprintf(bad, sizeof bad, "%s/corrupt.ckpt", run_dir);
    /* flip one byte in the middle of the weights */
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && size=$(stat -c %%s '%s') && printf '\\377' | "
             "dd of='%s' bs=1 seek=$((size / 2)) conv=notrunc status=none", ck, bad, bad, bad);
    ck_assert_int_eq(system(cmd), 0);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", bad, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "CRC"));
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    /* and a truncated one */
    snprintf(cmd, sizeof cmd, "head -c 100 '%s' > '%s'", ck, bad);
    ck_assert_int_eq(system(cmd), 0);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", bad, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    remove_run();
}
END_TEST

START_TEST(unwritable_out_is_refused)
{
    /* a path below a regular file cannot be a directory, even for root */
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--steps", "1", "--out",
                                            "/etc/hostname/run", "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "--out"));
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
}
END_TEST


/* ---- defaults from the registry, and the order of runs ------------------------------------ */

/* The registered names in registry order, as `attnlab help models` lists them, joined by
 * ','. */
static void registry_names(char *buf, size_t n)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"help", "models", NULL});
    ck_assert_int_eq(r.status, 0);
    buf[0] = '\0';
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        ck_assert_int_eq(sscanf(line, "%63s", name), 1);
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "", name);
    }
    ck_assert_msg(strchr(buf, ','), "help models lists one model or none: '%s'", buf);
}

START_TEST(defaults_come_from_the_registry)
{
    /* in-process: the default model is the first registered one, --models every one */
    config c;
    config_defaults(&c);
    ck_assert_str_eq(c.model, model_registry[0]->name);
    char all[256], want[256] = "";
    args_all_models(all, sizeof all);
    for (size_t k = 0; model_registry[k]; k++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", k ? "," : "",
                 model_registry[k]->name);
    ck_assert_str_eq(all, want);
    /* every size has a default even though config.c writes none: each model's own */
    for (size_t k = 0; model_registry[k]; k++) {
        config d = c;
        model_registry[k]->defaults(&d);
        char err[256];
        ck_assert_msg(model_registry[k]->check(&d, err, sizeof err) == 0, "%s: %s",
                      model_registry[k]->name, err);
    }

    /* the program: the same names, in the same order, wherever a default is a model */
    char names[256], text[512], first[64];
    registry_names(names, sizeof names);
    ck_assert_str_eq(names, want);
    snprintf(first, sizeof first, "%.*s", (int)strcspn(names, ","), names);
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--help", NULL});
    snprintf(text, sizeof text, "--model              model to train (see `attnlab help "
             "models`) (default %s)\n", first);
    ck_assert_msg(strstr(r.out, text), "train --help lacks '%s'", text);
    ck_assert_ptr_nonnull(strstr(r.out, "--d-model            model width D of attention-only layers (default "));
    ck_assert_ptr_nonnull(strstr(r.out, "--hidden             recurrent state width H (default "));
    cli_run(&r, NULL, (const char *const[]){"compare", "--help", NULL});
    snprintf(text, sizeof text,
             "--models LIST   comma-separated, each model once (default: %s)\n", names);
    ck_assert_msg(strstr(r.out, text), "compare --help lacks '%s'", text);
    cli_run(&r, NULL, (const char *const[]){"gradcheck", "--stride", "100000", NULL});
    ck_assert_msg(r.status == 0, "gradcheck without --model: %s", r.err);
    snprintf(text, sizeof text, "gradient check of %s:", first);
    ck_assert_msg(strstr(r.out, text), "gradcheck does not check %s by default", first);
    /* compare without --models: one run of every model, seed by seed, in registry order */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "smoke", "--seeds", "2",
                                            "--out", "/tmp/x", "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 0);
    char order[512] = "";
    for (const char *p = strstr(r.out, " --model="); p; p = strstr(p + 1, " --model=")) {
        size_t len = strcspn(p + 9, " ");
        snprintf(order + strlen(order), sizeof order - strlen(order), "%s%.*s",
                 order[0] ? "," : "", (int)len, p + 9);
    }
    snprintf(text, sizeof text, "%s,%s", names, names);
    ck_assert_str_eq(order, text);
}
END_TEST

/* The capacity preset: the LSTM at four widths and each attention model once, seed by
 * seed, each width a setup of its own (its own run directory, the width passed to train);
 * --models keeps the setups of the models it names; the training recipe of the presets
 * (validation window, target, cosine decay) reaches every job. */
START_TEST(capacity_preset_sweeps_the_lstm)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "capacity", "--out", "/tmp/c",
                                            "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    static const char *const want[] = {"lstm-hidden32", "lstm-hidden64", "lstm-hidden128",
                                       "lstm-hidden256", "rnn_attention", "transformer"};
    const char *line = r.out;
    for (int seed = 1; seed <= 3; seed++)
        for (size_t k = 0; k < 6; k++) {
            char out[128];
            snprintf(out, sizeof out, "--out=/tmp/c/runs/%s-s%d", want[k], seed);
            const char *end = strchr(line, '\n');
            ck_assert_msg(end && strstr(line, out) && strstr(line, out) < end,
                          "job %d.%zu is not %s: %.300s", seed, k, out, line);
            if (k < 4) {
                char width[32];
                snprintf(width, sizeof width, " --model=lstm --hidden=%s ", want[k] + 11);
                ck_assert_msg(strstr(line, width) && strstr(line, width) < end, "%.300s", line);
            }
            ck_assert_msg(strstr(line, "--val-window=4 ") && strstr(line, "--stop-acc=0.999 ") &&
                              strstr(line, "--lr-schedule=cosine "),
                          "%.300s", line);
            line = end + 1;
        }
    ck_assert_str_eq(line, "");
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "capacity", "--models",
                                            "transformer,lstm", "--out", "/tmp/c",
                                            "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    size_t lines = 0;
    for (const char *p = r.out; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_uint_eq(lines, 15); /* 4 widths and the transformer, 3 seeds */
    ck_assert_ptr_null(strstr(r.out, "rnn_attention"));
}
END_TEST

START_TEST(report_reads_runs_in_name_order)
{
    /* run directories made in an order that is neither sorted nor its reverse; each has
     * a config.tsv (so it is listed) that is not a configuration (so it is skipped with
     * its name): the messages show the order the runs were read in */
    static const char *const made[] = {"m-s2", "a-s1", "z-s3", "c-s1", "y-s7", "b-s9",
                                       "k-s4", "d-s5"};
    static const char *const sorted[] = {"a-s1", "b-s9", "c-s1", "d-s5",
                                         "k-s4", "m-s2", "y-s7", "z-s3"};
    const size_t n = sizeof made / sizeof made[0];
    char dir[64], path[160];
    snprintf(dir, sizeof dir, "/tmp/attnlab-order-%ld", (long)getpid());
    snprintf(path, sizeof path, "%s/runs", dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    for (size_t k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/runs/%s", dir, made[k]);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/runs/%s/config.tsv", dir, made[k]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("not a configuration\n", f);
        fclose(f);
    }
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"report", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "no finished run to report"));
    const char *at = r.err;
    for (size_t k = 0; k < n; k++) {
        char want[160];
        snprintf(want, sizeof want, "skipping %s/runs/%s:", dir, sorted[k]);
        const char *hit = strstr(r.err, want);
        ck_assert_msg(hit, "no message for %s: %s", sorted[k], r.err);
        ck_assert_msg(hit >= at, "%s is read out of name order: %s", sorted[k], r.err);
        at = hit;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(model_refusal_is_a_runtime_error)
{
    /* a source token every model must refuse (error contract of model.h): the trace ends
     * with status 1 and one line that quotes the model's own message; model _i of the
     * registry */
    const model_ops *ops = model_registry[_i];
    config c;
    config_defaults(&c);
    ops->defaults(&c);
    ops->gradcheck_sizes(&c);
    model *m = ops->alloc(&c);
    ck_assert_ptr_nonnull(m);
    gsl_rng *r = tu_rng(5);
    ops->init(m, r);
    const int src[3] = {1, 99, 2}; /* 99: far outside the vocabulary */
    char dir[64], errp[] = "/tmp/attnlab-cli-refused-XXXXXX", text[1024];
    snprintf(dir, sizeof dir, "/tmp/attnlab-refused-%ld", (long)getpid());
    int fd = mkstemp(errp), saved = dup(2);
    ck_assert(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    args_set_command("attnlab attention");
    const int rc = cmd_write_trace(m, src, 3, 0, dir, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    cli_slurp(errp, text, sizeof text);
    unlink(errp);
    ck_assert_int_eq(rc, 1);
    ck_assert_uint_eq(cli_count_lines(text), 1);
    ck_assert_msg(strstr(text, "attnlab attention: ") == text, "message: %s", text);
    ck_assert_msg(model_last_error()[0] && strstr(text, model_last_error()),
                  "'%s' does not quote '%s'", text, model_last_error());
    m->ops->free(m);
    gsl_rng_free(r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The number of registered models. */
static size_t cli_n_models(void)
{
    size_t n = 0;
    while (model_registry[n])
        n++;
    return n;
}

Suite *make_cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("usage");
    /* each case starts the program several times: seconds under a sanitizer on a busy
     * machine, beyond Check's default of 4 */
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, bad_input_is_named, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, long_values_are_refused_or_kept_whole);
    tcase_add_test(tc, a_repeated_flag_keeps_its_last_value);
    tcase_add_test(tc, gradcheck_command_passes);
    tcase_add_test(tc, unwritable_out_is_refused);
    tcase_add_test(tc, defaults_come_from_the_registry);
    tcase_add_test(tc, report_reads_runs_in_name_order);
    tcase_add_test(tc, capacity_preset_sweeps_the_lstm);
    tcase_add_loop_test(tc, model_refusal_is_a_runtime_error, 0, (int)cli_n_models());
    suite_add_tcase(s, tc);
    tc = tcase_create("runs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, train_writes_every_file);
    tcase_add_test(tc, eval_reads_checkpoint_and_input);
    tcase_add_test(tc, corrupt_checkpoint_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
