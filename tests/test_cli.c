/* test_cli.c — the attnlab program seen from outside: exit statuses, the one-line
 * messages of usage and runtime errors, the files a run writes, and the commands that
 * read them back (eval, eval --input, attention). Runs the built program (the path in
 * $ATTNLAB, default build/attnlab) in a child process; the defaults that come from the
 * model registry are also checked in-process. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cli_args.h"
#include "../common/cli_cmd.h"
#include "../common/config.h"
#include "../common/model.h"
#include "testutil.h"

/* What one run of the program printed and returned. */
typedef struct run_out {
    int status;      /* exit status, or -1 when it died of a signal */
    char out[16384]; /* standard output (truncated) */
    char err[4096];  /* standard error (truncated) */
} run_out;

static const char *program(void)
{
    const char *p = getenv("ATTNLAB");
    return p && *p ? p : "build/attnlab";
}

/* Reads a whole small file into buf (NUL-terminated, truncated to n-1 bytes). */
static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = '\0';
    if (f)
        fclose(f);
}

/* Runs the program with the NULL-terminated argument list (argv[0] excluded), feeding
 * stdin_text (may be NULL) on standard input. */
static void run(run_out *r, const char *stdin_text, const char *const *args)
{
    char outp[] = "/tmp/attnlab-cli-out-XXXXXX", errp[] = "/tmp/attnlab-cli-err-XXXXXX";
    char inp[] = "/tmp/attnlab-cli-in-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp), fi = mkstemp(inp);
    ck_assert(fo >= 0 && fe >= 0 && fi >= 0);
    if (stdin_text)
        ck_assert(write(fi, stdin_text, strlen(stdin_text)) == (ssize_t)strlen(stdin_text));
    lseek(fi, 0, SEEK_SET);
    const char *argv[64] = {program()};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        /* execv takes char *const[]: copy the pointers instead of casting away const */
        char *args_rw[64];
        for (size_t i = 0; i <= n; i++)
            args_rw[i] = argv[i] ? strdup(argv[i]) : NULL;
        execv(args_rw[0], args_rw);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    close(fo);
    close(fe);
    close(fi);
    slurp(outp, r->out, sizeof r->out);
    slurp(errp, r->err, sizeof r->err);
    unlink(outp);
    unlink(errp);
    unlink(inp);
}

/* Starts argv (argv[0] the program, NULL-terminated) in the background with its output
 * discarded, in a process group of its own when own_group is set; returns its pid. */
static pid_t spawn_silent(const char *const *argv, int own_group)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        if (own_group)
            setpgid(0, 0);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        char *rw[32]; /* execv takes char *const[]: copies, not a cast */
        size_t n = 0;
        for (; argv[n] && n < 31; n++)
            rw[n] = strdup(argv[n]);
        rw[n] = NULL;
        execv(rw[0], rw);
        _exit(127);
    }
    return pid;
}

/* Number of lines in s. */
static size_t count_lines(const char *s)
{
    size_t k = 0;
    for (; *s; s++)
        k += *s == '\n';
    return k;
}

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
    {{"eval", "--checkpoint", "/nonexistent/model.ckpt", NULL}, 1, "/nonexistent/model.ckpt"},
    {{"eval", "--checkpoint", "/tmp", NULL}, 1, "/tmp"},
};

START_TEST(bad_input_is_named)
{
    const bad_case *c = &bad_cases[_i];
    run_out r;
    run(&r, NULL, c->args);
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
    ck_assert_uint_eq(count_lines(r.err), c->status == 2 ? 2 : 1);
    ck_assert_str_eq(r.out, "");
}
END_TEST

START_TEST(help_and_version)
{
    run_out r;
    run(&r, NULL, (const char *const[]){"--version", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "BLAS:"));
    ck_assert_ptr_nonnull(strstr(r.out, "flags:"));
    static const char *const cmds[] = {"train", "eval", "gradcheck", "attention"};
    for (size_t k = 0; k < 4; k++) {
        run(&r, NULL, (const char *const[]){cmds[k], "--help", NULL});
        ck_assert_msg(r.status == 0, "%s --help: status %d", cmds[k], r.status);
        ck_assert_ptr_nonnull(strstr(r.out, "Usage: attnlab"));
        ck_assert_ptr_nonnull(strstr(r.out, "Example"));
    }
    run(&r, NULL, (const char *const[]){"help", "models", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "lstm"));
    run(&r, NULL, (const char *const[]){NULL});
    ck_assert_int_eq(r.status, 2);
}
END_TEST

START_TEST(gradcheck_command_passes)
{
    run_out r;
    run(&r, NULL, (const char *const[]){"gradcheck", "--model", "lstm", NULL});
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
    run(&r, NULL,
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
    slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "step\tseconds\tlr\tloss\ttoken_acc"), text);
    snprintf(path, sizeof path, "%s/eval.tsv", run_dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "model\tlen\tsamples\ttoken_acc\tseq_acc\tloss\n"), text);
    snprintf(path, sizeof path, "%s/config.tsv", run_dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "hidden\t8\n"));
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
    run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "3,5",
                                        "--samples", "16", NULL});
    ck_assert_msg(r.status == 0, "eval: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "token_acc"));
    /* --input: good lines answered, bad lines reported by number, status 1 */
    run(&r, "3 1 4\n\n3 x 4\n1 2 12\n5 9 2 6\n",
        (const char *const[]){"eval", "--checkpoint", ck, "--input", "-", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "line 1\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "line 5\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "target:    5 9 2 6"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 2: empty line"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 3: 'x'"));
    ck_assert_ptr_nonnull(strstr(r.err, "line 4: symbol 12"));
    ck_assert_uint_eq(count_lines(r.err), 3);
    /* the loss is printed with 10 significant digits */
    const char *loss = strstr(r.out, "loss:      ");
    ck_assert_ptr_nonnull(loss);
    double v;
    ck_assert_int_eq(sscanf(loss + 11, "%lf", &v), 1);
    ck_assert(v > 0);
    /* attention on an LSTM shows its gates */
    run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input", "1 2 3",
                                        NULL});
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
    run(&r, NULL, (const char *const[]){"eval", "--checkpoint", bad, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "CRC"));
    ck_assert_uint_eq(count_lines(r.err), 1);
    /* and a truncated one */
    snprintf(cmd, sizeof cmd, "head -c 100 '%s' > '%s'", ck, bad);
    ck_assert_int_eq(system(cmd), 0);
    run(&r, NULL, (const char *const[]){"eval", "--checkpoint", bad, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(count_lines(r.err), 1);
    remove_run();
}
END_TEST

START_TEST(unwritable_out_is_refused)
{
    /* a path below a regular file cannot be a directory, even for root */
    run_out r;
    run(&r, NULL, (const char *const[]){"train", "--steps", "1", "--out",
                                        "/etc/hostname/run", "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "--out"));
    ck_assert_uint_eq(count_lines(r.err), 1);
}
END_TEST


/* ---- reliability: divergence, interruption, determinism ------------------------------ */

/* Are the two files byte for byte the same? */
static int same_file(const char *a, const char *b)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

START_TEST(divergence_is_reported_and_keeps_files)
{
    char dir[64], path[128], text[8192];
    snprintf(dir, sizeof dir, "/tmp/attnlab-nan-%ld", (long)getpid());
    run_out r;
    /* Adam moves every weight by about lr per step whatever the gradient, so only an
     * absurd rate makes the products overflow: weights near 1e300 after one step */
    run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--hidden", "8", "--embed",
                                        "4", "--lr", "1e300", "--clip", "0", "--steps", "2000",
                                        "--checkpoint-every", "1", "--log-every", "1",
                                        "--train-len", "3:5", "--out", dir, "--quiet", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "lstm diverged at step "), "message: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "--lr"));
    ck_assert_ptr_nonnull(strstr(r.err, "tensor '"));
    /* the log up to the last good step and the last good checkpoint stay */
    snprintf(path, sizeof path, "%s/train_log.tsv", dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_eq(strstr(text, "step\tseconds"), text);
    ck_assert_uint_ge(count_lines(text), 2);
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    run(&r, NULL, (const char *const[]){"eval", "--checkpoint", path, "--lengths", "3",
                                        "--samples", "4", NULL});
    ck_assert_msg(r.status == 0, "the kept checkpoint does not load: %s", r.err);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

/* The settings of the interrupted and the uninterrupted run: identical but --out. */
#define RESUME_ARGS "train", "--model", "lstm", "--hidden", "16", "--embed", "8", \
    "--steps", "400", "--train-len", "4:10", "--checkpoint-every", "20", "--log-every", \
    "20", "--samples", "16", "--eval-lengths", "4,8", "--quiet"

START_TEST(interrupt_then_resume_gives_the_same_weights)
{
    char a[64], b[64], pa[128], pb[128];
    snprintf(a, sizeof a, "/tmp/attnlab-resume-a-%ld", (long)getpid());
    snprintf(b, sizeof b, "/tmp/attnlab-resume-b-%ld", (long)getpid());
    run_out r;
    run(&r, NULL, (const char *const[]){RESUME_ARGS, "--out", a, NULL});
    ck_assert_msg(r.status == 0, "uninterrupted run: %s", r.err);

    /* start the same run, stop it with SIGINT once its first checkpoint is on disk */
    const char *argv[] = {program(), RESUME_ARGS, "--out", b, NULL};
    pid_t pid = spawn_silent(argv, 0);
    snprintf(pb, sizeof pb, "%s/checkpoint.ckpt", b);
    for (int k = 0; k < 2000 && access(pb, F_OK) != 0; k++)
        usleep(5000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st));
    if (WEXITSTATUS(st) == 0) {
        /* the run finished before the signal landed: nothing to resume, nothing to test */
        fprintf(stderr, "interrupt test: the run ended before SIGINT; not exercised\n");
    } else {
        ck_assert_int_eq(WEXITSTATUS(st), 130);
        snprintf(pb, sizeof pb, "%s/eval.tsv", b);
        ck_assert_int_ne(access(pb, F_OK), 0); /* not finished */
        run(&r, NULL, (const char *const[]){"train", "--resume", b, "--quiet", NULL});
        ck_assert_msg(r.status == 0, "resume: %s", r.err);
    }
    snprintf(pa, sizeof pa, "%s/model.ckpt", a);
    snprintf(pb, sizeof pb, "%s/model.ckpt", b);
    ck_assert_msg(same_file(pa, pb), "resumed weights differ from the uninterrupted run");
    snprintf(pa, sizeof pa, "%s/eval.tsv", a);
    snprintf(pb, sizeof pb, "%s/eval.tsv", b);
    ck_assert(same_file(pa, pb));
    /* a finished run cannot be resumed */
    run(&r, NULL, (const char *const[]){"train", "--resume", b, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "already finished"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", a, b);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(same_command_same_bytes)
{
    char d[3][64], p[2][128];
    const char *seeds[3] = {"5", "5", "6"};
    run_out r;
    for (int k = 0; k < 3; k++) {
        snprintf(d[k], sizeof d[k], "/tmp/attnlab-det-%d-%ld", k, (long)getpid());
        run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--hidden", "8",
                                            "--embed", "4", "--steps", "60", "--train-len",
                                            "3:6", "--samples", "32", "--seed", seeds[k],
                                            "--out", d[k], "--quiet", NULL});
        ck_assert_msg(r.status == 0, "%s", r.err);
    }
    static const char *const files[] = {"model.ckpt", "eval.tsv", "eval_positions.tsv",
                                        "config.tsv"};
    for (int f = 0; f < 4; f++) {
        snprintf(p[0], sizeof p[0], "%s/%s", d[0], files[f]);
        snprintf(p[1], sizeof p[1], "%s/%s", d[1], files[f]);
        ck_assert_msg(same_file(p[0], p[1]), "%s differs between two identical runs",
                      files[f]);
    }
    /* another seed: other weights */
    snprintf(p[0], sizeof p[0], "%s/model.ckpt", d[0]);
    snprintf(p[1], sizeof p[1], "%s/model.ckpt", d[2]);
    ck_assert(!same_file(p[0], p[1]));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", d[0], d[1], d[2]);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- compare and report ------------------------------------------------------------------ */

/* The first line of dir/name, without its newline ("" when unreadable). */
static void first_line(const char *dir, const char *name, char *buf, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    slurp(path, buf, n);
    buf[strcspn(buf, "\n")] = '\0';
}

/* Does dir (recursively) hold a temporary file left by an interrupted write? */
static int has_temporary(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp*' | grep -q .", dir);
    return system(cmd) == 0;
}

#define TINY_COMPARE "compare", "--preset", "smoke", "--models", "lstm,transformer", \
    "--steps", "12", "--eval-lengths", "2:8:2", "--samples", "8", "--jobs", "2"

START_TEST(compare_writes_documented_tables_and_resumes)
{
    char dir[64], line[1024];
    snprintf(dir, sizeof dir, "/tmp/attnlab-cmp-%ld", (long)getpid());
    run_out r;
    run(&r, NULL, (const char *const[]){TINY_COMPARE, "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "compare: %s", r.err);
    static const struct {
        const char *file, *header;
    } tables[] = {
        {"accuracy.tsv", "model\tparams\tlen\tseeds\ttoken_mean\ttoken_sd\ttoken_min\t"
                         "token_max\tseq_mean\tseq_sd\tseq_min\tseq_max"},
        {"positions.tsv", "model\tlen\tposition\tseeds\tacc_mean\tacc_min\tacc_max"},
        {"curves.tsv", "model\tstep\tseeds\tseconds_mean\tloss_mean\tloss_min\tloss_max\t"
                       "acc_mean\tacc_min\tacc_max"},
        {"cost.tsv", "model\tlen\tseeds\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq"},
        {"summary.tsv", "model\tparams\tseeds\ttrain_seconds_mean\tlen\ttoken_mean\ttoken_sd\t"
                        "seq_mean\tseq_sd"},
        {"manifest.tsv", "key\tvalue"},
        {"runs/lstm-s1/eval.tsv", "model\tlen\tsamples\ttoken_acc\tseq_acc\tloss"},
        {"runs/transformer-s1/cost.tsv",
         "model\tlen\ttrain_ms_per_seq\tflops_per_seq\tdecode_ms_per_seq"},
    };
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        first_line(dir, tables[k].file, line, sizeof line);
        ck_assert_msg(strcmp(line, tables[k].header) == 0, "%s header: '%s'", tables[k].file,
                      line);
    }
    char path[256], text[8192];
    snprintf(path, sizeof path, "%s/accuracy.tsv", dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "\nlstm\t"));
    ck_assert_ptr_nonnull(strstr(text, "\ntransformer\t"));
    snprintf(path, sizeof path, "%s/figure_vars.gp", dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "models = \"lstm transformer\""));
    snprintf(path, sizeof path, "%s/report.html", dir);
    slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "<table>"));
    ck_assert(!has_temporary(dir));

    /* the same command again: both runs are finished and skipped */
    run(&r, NULL, (const char *const[]){TINY_COMPARE, "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "second compare: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "lstm seed 1: finished earlier, skipped"));
    ck_assert_ptr_nonnull(strstr(r.err, "transformer seed 1: finished earlier, skipped"));
    ck_assert_ptr_nonnull(strstr(r.err, "0 to do"));

    /* report merges run directories given one by one */
    char out[96], r1[128], r2[128];
    snprintf(out, sizeof out, "%s-merged", dir);
    snprintf(r1, sizeof r1, "%s/runs/lstm-s1", dir);
    snprintf(r2, sizeof r2, "%s/runs/transformer-s1", dir);
    run(&r, NULL, (const char *const[]){"report", "--out", out, r1, r2, NULL});
    ck_assert_msg(r.status == 0, "report: %s", r.err);
    snprintf(path, sizeof path, "%s/accuracy.tsv", out);
    slurp(path, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "\nlstm\t"));
    ck_assert_ptr_nonnull(strstr(text, "\ntransformer\t"));
    /* a directory that is not a run is named and skipped, not fatal */
    run(&r, NULL, (const char *const[]){"report", "--out", out, r1, "/tmp", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "skipping /tmp"));

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, out);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(compare_print_jobs)
{
    run_out r;
    run(&r, NULL, (const char *const[]){"compare", "--preset", "quick", "--seeds", "3",
                                        "--out", "/tmp/x", "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(count_lines(r.out), 9); /* 3 models x 3 seeds */
    ck_assert_ptr_nonnull(strstr(r.out, " train --model=transformer "));
    ck_assert_ptr_nonnull(strstr(r.out, "--seed=3 "));
    ck_assert_ptr_nonnull(strstr(r.out, "'--trace=3 1 4 1 5 9 2 6 5 3 5 8'"));
    ck_assert_int_ne(access("/tmp/x/manifest.tsv", F_OK), 0); /* nothing was run */
    run(&r, NULL, (const char *const[]){"compare", "--hidden", "7", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--hidden"));
    run(&r, NULL, (const char *const[]){"compare", "--preset", "huge", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "huge"));
}
END_TEST

START_TEST(killed_compare_leaves_no_partial_file)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/attnlab-kill-%ld", (long)getpid());
    const char *argv[] = {program(), "compare", "--models", "lstm", "--seeds", "2",
                          "--steps", "3000", "--train-len", "4:8", "--jobs", "2",
                          "--out", dir, NULL};
    /* its own process group: the signal below reaches it and its runs */
    pid_t pid = spawn_silent(argv, 1);
    char ck[128];
    snprintf(ck, sizeof ck, "%s/runs/lstm-s1/checkpoint.ckpt", dir);
    for (int k = 0; k < 4000 && access(ck, F_OK) != 0; k++)
        usleep(5000);
    usleep(20000);
    kill(-pid, SIGTERM); /* as a scheduler or `kill` would: to the whole group */
    int st;
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st));
    ck_assert_msg(WEXITSTATUS(st) == 143, "compare exit status %d", WEXITSTATUS(st));
    ck_assert_msg(!has_temporary(dir), "a temporary file was left in %s", dir);
    /* each run stopped with its state saved: a resumable checkpoint and a whole log */
    char path[160], line[256];
    for (int s = 1; s <= 2; s++) {
        snprintf(path, sizeof path, "%s/runs/lstm-s%d", dir, s);
        first_line(path, "train_log.tsv", line, sizeof line);
        ck_assert_str_eq(line, "step\tseconds\tlr\tloss\ttoken_acc\tseq_acc\tgrad_norm\tseq_per_s");
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- defaults from the registry, and the order of runs ------------------------------------ */

/* The registered names in registry order, as `attnlab help models` lists them, joined by
 * ','. */
static void registry_names(char *buf, size_t n)
{
    run_out r;
    run(&r, NULL, (const char *const[]){"help", "models", NULL});
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
    run(&r, NULL, (const char *const[]){"train", "--help", NULL});
    snprintf(text, sizeof text, "--model              model to train (see `attnlab help "
             "models`) (default %s)\n", first);
    ck_assert_msg(strstr(r.out, text), "train --help lacks '%s'", text);
    ck_assert_ptr_nonnull(strstr(r.out, "--d-model            transformer width D (default "));
    ck_assert_ptr_nonnull(strstr(r.out, "--hidden             recurrent state width H (default "));
    run(&r, NULL, (const char *const[]){"compare", "--help", NULL});
    snprintf(text, sizeof text,
             "--models LIST   comma-separated, each model once (default: %s)\n", names);
    ck_assert_msg(strstr(r.out, text), "compare --help lacks '%s'", text);
    run(&r, NULL, (const char *const[]){"gradcheck", "--stride", "100000", NULL});
    ck_assert_msg(r.status == 0, "gradcheck without --model: %s", r.err);
    snprintf(text, sizeof text, "gradient check of %s:", first);
    ck_assert_msg(strstr(r.out, text), "gradcheck does not check %s by default", first);
    /* compare without --models: one run of every model, seed by seed, in registry order */
    run(&r, NULL, (const char *const[]){"compare", "--preset", "smoke", "--seeds", "2",
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
    run(&r, NULL, (const char *const[]){"report", dir, NULL});
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
    /* a source token the model must refuse (error contract of model.h): the trace ends
     * with status 1 and one line that quotes the model's own message */
    const model_ops *ops = model_registry[0];
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
    const int rc = cmd_write_trace(m, src, 3, dir, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    slurp(errp, text, sizeof text);
    unlink(errp);
    ck_assert_int_eq(rc, 1);
    ck_assert_uint_eq(count_lines(text), 1);
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

Suite *make_cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("usage");
    /* each case starts the program several times: seconds under a sanitizer on a busy
     * machine, beyond Check's default of 4 */
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, bad_input_is_named, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, gradcheck_command_passes);
    tcase_add_test(tc, unwritable_out_is_refused);
    tcase_add_test(tc, defaults_come_from_the_registry);
    tcase_add_test(tc, report_reads_runs_in_name_order);
    tcase_add_test(tc, model_refusal_is_a_runtime_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("runs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, train_writes_every_file);
    tcase_add_test(tc, eval_reads_checkpoint_and_input);
    tcase_add_test(tc, corrupt_checkpoint_is_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("reliability");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, divergence_is_reported_and_keeps_files);
    tcase_add_test(tc, interrupt_then_resume_gives_the_same_weights);
    tcase_add_test(tc, same_command_same_bytes);
    suite_add_tcase(s, tc);
    tc = tcase_create("compare");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, compare_print_jobs);
    suite_add_tcase(s, tc);
    /* compare starts the program itself once per run: under qemu-user without binfmt
     * (.ci/arm64.sh) the kernel cannot start an arm64 program, so these are left out there */
    tc = tcase_create("compare_runs");
    tcase_set_tags(tc, "noqemu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, compare_writes_documented_tables_and_resumes);
    tcase_add_test(tc, killed_compare_leaves_no_partial_file);
    suite_add_tcase(s, tc);
    return s;
}
