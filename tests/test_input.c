/* test_input.c — reading what the program is given: every file it reads refuses a FIFO
 * and a directory at once with one line naming it, a read error or memory running out
 * stops the reading as an error (never as the end of the input), an endless --input
 * line ends, the comment lines of a data file are counted, a byte-order mark is
 * skipped, and a data file whose CRC-32 is 0 is checked like any other.
 *
 * Design. Two levels. In this process: the readers of common/ (infile.h, tsv_read,
 * dataset_read, ckpt_load, afile_read) on a FIFO and a directory, and the line reader
 * on a closed descriptor and, in a child limited by RLIMIT_AS, on an endless line.
 * Through the program: each command and each file it reads replaced by a FIFO. Every
 * child the tests start gets an alarm before it runs the program, so a command that
 * blocked on a FIFO is killed by SIGALRM and the test fails, naming the case, instead of
 * waiting forever. Files go to a directory of this process under /tmp.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/core/afile.h"
#include "../common/core/checkpoint.h"
#include "../common/core/config.h"
#include "../common/core/crc32.h"
#include "../common/core/dataset.h"
#include "../common/core/infile.h"
#include "../common/core/tsv.h"
#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

/* Seconds a command may take before the test takes it for blocked: far above what any
 * of them needs, and only reached by a command that waits on a FIFO. */
#define HANG_SECONDS 60

/* Sanitizer builds reserve terabytes of address space, so RLIMIT_AS cannot be used. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* ---- helpers ------------------------------------------------------------------------ */

/* An address-space limit extra bytes above what this process maps now (Linux tells it
 * in /proc/self/statm; elsewhere 1 GiB is assumed to be in use). */
static rlim_t as_room(rlim_t extra)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    if (f)
        fclose(f);
    const rlim_t used = pages ? (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) : (rlim_t)1 << 30;
    return used + extra;
}

/* The directory of this test's files, made once per process. */
static const char *tmpdir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/attnlab-input-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    } else if (access(dir, F_OK) != 0) { /* removed by an earlier test of this process */
        ck_assert_int_eq(mkdir(dir, 0700), 0);
    }
    return dir;
}

/* dir/name into buf (the test fails rather than cut it). */
static void in_dir(char *buf, size_t n, const char *name)
{
    ru_fmt(buf, n, "%s/%s", tmpdir(), name);
}

/* Replaces path (a file, or nothing) by a FIFO. */
static void make_fifo(const char *path)
{
    unlink(path);
    ck_assert_msg(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
}

/* n examples of the reversal of two or three letters, after a header comment. */
static char *letters(size_t n)
{
    char *s = malloc(64 + n * 16);
    size_t at = (size_t)sprintf(s, "# reversal of letters\n");
    for (size_t k = 0; k < n; k++) {
        const char a = (char)('a' + k % 26), b = (char)('a' + k / 26 % 26);
        if (k % 2)
            at += (size_t)sprintf(s + at, "%c %c\t%c %c\n", a, b, b, a);
        else
            at += (size_t)sprintf(s + at, "%c %c z\tz %c %c\n", a, b, b, a);
    }
    return s;
}

/* Runs the program with args as cli_run does, but with standard input read from
 * stdin_fd (-1: /dev/null), the address space limited to as_limit bytes when it is not
 * 0, and an alarm of HANG_SECONDS; a program that blocked dies of SIGALRM and the test
 * fails naming what. */
static void run_guarded(run_out *r, const char *what, int stdin_fd, rlim_t as_limit,
                        const char *const *args)
{
    char outp[] = "/tmp/attnlab-input-out-XXXXXX", errp[] = "/tmp/attnlab-input-err-XXXXXX";
    const int fo = mkstemp(outp), fe = mkstemp(errp);
    ck_assert(fo >= 0 && fe >= 0);
    char *argv[64] = {strdup(tu_program())};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = strdup(args[n - 1]);
    argv[n] = NULL;
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        const int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        if (as_limit) {
            const struct rlimit lim = {as_limit, as_limit};
            if (setrlimit(RLIMIT_AS, &lim) != 0)
                _exit(126);
        }
        alarm(HANG_SECONDS); /* kept across exec: the program itself is timed */
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    for (size_t i = 0; i < n; i++)
        free(argv[i]);
    ck_assert_msg(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM),
                  "%s: blocked for %d s (killed by the test's alarm)", what, HANG_SECONDS);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    close(fo);
    close(fe);
    cli_slurp(outp, r->out, sizeof r->out);
    cli_slurp(errp, r->err, sizeof r->err);
    unlink(outp);
    unlink(errp);
}

/* ---- the readers of common/, in this process ------------------------------------------ */

START_TEST(every_reader_refuses_a_fifo_and_a_directory)
{
    char fifo[128], dir[128], err[512];
    in_dir(fifo, sizeof fifo, "reader.fifo");
    in_dir(dir, sizeof dir, "reader.dir");
    make_fifo(fifo);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    const char *const paths[] = {fifo, dir};
    const char *const kinds[] = {"it is a FIFO, not a regular file",
                                 "it is a directory, not a regular file"};
    for (int k = 0; k < 2; k++) {
        const char *p = paths[k];
        size_t len;
        err[0] = '\0';
        ck_assert_ptr_null(infile_read(p, 1 << 20, &len, err, sizeof err));
        ck_assert_msg(strstr(err, p) && strstr(err, kinds[k]), "infile_read: %s", err);
        err[0] = '\0';
        ck_assert_ptr_null(infile_open(p, 1, err, sizeof err));
        ck_assert_msg(strstr(err, p) && strstr(err, kinds[k]), "infile_open: %s", err);
        ck_assert_ptr_null(afile_read(p, 1 << 20, &len));
        tsv t;
        err[0] = '\0';
        ck_assert_int_eq(tsv_read(&t, p, err, sizeof err), -1);
        ck_assert_msg(strstr(err, p) && strstr(err, kinds[k]), "tsv_read: %s", err);
        dataset d;
        err[0] = '\0';
        ck_assert_int_eq(dataset_read(&d, p, 8, err, sizeof err), -1);
        ck_assert_msg(strstr(err, p) && strstr(err, kinds[k]), "dataset_read: %s", err);
        err[0] = '\0';
        ck_assert_ptr_null(ckpt_load(p, NULL, err, sizeof err));
        ck_assert_msg(strstr(err, p) && strstr(err, k ? "is a directory" : "(a FIFO)"),
                      "ckpt_load: %s", err);
    }
    ru_remove_tree(tmpdir());
}
END_TEST

START_TEST(the_line_reader_tells_an_error_from_the_end)
{
    char path[128], err[256], *line = NULL;
    size_t cap = 0;
    in_dir(path, sizeof path, "lines.txt");
    ru_spit(path, "one\ntw\0o\nthree", 14);
    FILE *f = infile_open(path, 0, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(infile_getline(&line, &cap, 64, f, path, err, sizeof err), 4);
    ck_assert_int_eq(infile_getline(&line, &cap, 64, f, path, err, sizeof err), 5);
    ck_assert_int_eq(memcmp(line, "tw\0o\n", 5), 0); /* the NUL is inside the length */
    ck_assert_int_eq(infile_getline(&line, &cap, 64, f, path, err, sizeof err), 5);
    ck_assert_str_eq(line, "three");
    ck_assert_int_eq(infile_getline(&line, &cap, 64, f, path, err, sizeof err), INFILE_END);
    fclose(f);
    /* a line beyond max stops the reading */
    f = infile_open(path, 0, err, sizeof err);
    ck_assert_int_eq(infile_getline(&line, &cap, 3, f, path, err, sizeof err), INFILE_LONG);
    ck_assert_msg(strstr(err, "more than 3 bytes"), "%s", err);
    fclose(f);
    /* a read error (the descriptor under the stream closed) is not the end */
    f = infile_open(path, 0, err, sizeof err);
    close(fileno(f));
    err[0] = '\0';
    ck_assert_int_eq(infile_getline(&line, &cap, 64, f, path, err, sizeof err), INFILE_FAIL);
    ck_assert_msg(strstr(err, "cannot read ") && strstr(err, path), "%s", err);
    fclose(f);
    free(line);
    ru_remove_tree(tmpdir());
}
END_TEST

START_TEST(memory_running_out_is_not_the_end_of_a_line)
{
    if (UNDER_ASAN) {
        printf("memory_running_out_is_not_the_end_of_a_line: not run under "
               "AddressSanitizer (RLIMIT_AS)\n");
        return;
    }
    /* in a child: an endless line (/dev/zero) with room for 64 MiB more than now */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    const pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        FILE *zero = fopen("/dev/zero", "rb");
        const rlim_t room = as_room((rlim_t)64 << 20);
        const struct rlimit lim = {room, room};
        char err[256] = "", *line = NULL;
        size_t cap = 0;
        ssize_t got = -100;
        alarm(30); /* never an endless child, whatever happens below */
        if (zero && setrlimit(RLIMIT_AS, &lim) == 0) {
            /* an emulator (qemu-user, the arm64 run of CI) ignores RLIMIT_AS: then the
             * reader would read /dev/zero until the machine's memory ran out */
            void *probe = malloc((size_t)room);
            if (probe) {
                free(probe);
                dprintf(fds[1], "skip");
                _exit(0);
            }
            got = infile_getline(&line, &cap, (size_t)-1 / 2, zero, "/dev/zero", err,
                                 sizeof err);
        }
        dprintf(fds[1], "%zd %s", got, err);
        _exit(0);
    }
    close(fds[1]);
    char said[512] = "";
    ssize_t k = read(fds[0], said, sizeof said - 1);
    said[k > 0 ? k : 0] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    if (strcmp(said, "skip") == 0) {
        printf("memory_running_out_is_not_the_end_of_a_line: RLIMIT_AS is not enforced here "
               "(an emulator?): not run\n");
        return;
    }
    char want[32];
    snprintf(want, sizeof want, "%d /dev/zero: out of memory", INFILE_FAIL);
    ck_assert_msg(strncmp(said, want, strlen(want)) == 0, "the child said: %s", said);
}
END_TEST

/* ---- through the program -------------------------------------------------------------- */

/* A run stopped by divergence keeps checkpoint.ckpt, train_log.tsv, args.txt and
 * config.tsv: a run that train --resume reads. */
static void make_stopped_run(const char *dir)
{
    run_out r;
    run_guarded(&r, "a run that diverges", -1, 0,
                (const char *const[]){"train", "--model", "lstm", "--hidden", "4", "--embed",
                                      "4", "--lr", "1e300", "--clip", "0", "--steps", "200",
                                      "--checkpoint-every", "1", "--log-every", "1",
                                      "--train-len", "3:5", "--out", dir, "--quiet", NULL});
    ck_assert_msg(r.status == 1 && strstr(r.err, "diverged"), "%s", r.err);
}

/* One case: a command, and what its one line must say (status 1 or 2). */
typedef struct fifo_case {
    const char *what;
    const char *args[16]; /* "@X" stands for tmpdir()/X */
    const char *says;
    int status;
} fifo_case;

START_TEST(every_command_refuses_a_fifo_at_once)
{
    char data[128], ckpt[160], path[256];
    /* the files the cases name */
    in_dir(path, sizeof path, "fifo");
    make_fifo(path);
    in_dir(path, sizeof path, "adir");
    mkdir(path, 0700);
    in_dir(data, sizeof data, "moving.tsv");
    char *text = letters(40);
    ru_spit(data, text, strlen(text));
    free(text);
    char task[200], out[160];
    ru_fmt(task, sizeof task, "file:%s", data);
    in_dir(out, sizeof out, "filerun");
    run_out r;
    run_guarded(&r, "train on a file", -1, 0,
                (const char *const[]){"train", "--task", task, "--steps", "2", "--hidden",
                                      "4", "--embed", "4", "--out", out, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    make_fifo(data); /* the run's data file is now a FIFO */
    ru_fmt(ckpt, sizeof ckpt, "%s/model.ckpt", out);
    /* stopped runs, each with one file a FIFO */
    static const char *const resumed[] = {"args.txt", "config.tsv", "train_log.tsv"};
    char stopped[160];
    in_dir(stopped, sizeof stopped, "stopped");
    make_stopped_run(stopped);
    for (size_t k = 0; k < 3; k++) {
        char cmd[600];
        ru_fmt(cmd, sizeof cmd, "cp -r '%s' '%s/resume-%zu'", stopped, tmpdir(), k);
        ck_assert_int_eq(system(cmd), 0);
        ru_fmt(path, sizeof path, "%s/resume-%zu/%s", tmpdir(), k, resumed[k]);
        make_fifo(path);
    }
    /* finished runs for report, each with one table a FIFO; a comparison's manifest */
    static const char *const tables[] = {"config.tsv", "build.tsv", "train_log.tsv",
                                         "eval.tsv", "eval_positions.tsv", "cost.tsv"};
    for (size_t k = 0; k < 6; k++) {
        ru_fmt(path, sizeof path, "%s/report-%zu/runs/a", tmpdir(), k);
        ru_make_run(path, NULL, 0);
        ru_fmt(path, sizeof path, "%s/report-%zu/runs/a/%s", tmpdir(), k, tables[k]);
        make_fifo(path);
    }
    ru_fmt(path, sizeof path, "%s/report-m/runs/a", tmpdir());
    ru_make_run(path, NULL, 0);
    ru_fmt(path, sizeof path, "%s/report-m/manifest.tsv", tmpdir());
    make_fifo(path);

    const fifo_case cases[] = {
        {"train --task file:FIFO", {"train", "--task", "file:@fifo", "--out", "@o1"},
         "@fifo: it is a FIFO", 2},
        {"train --task file:DIR", {"train", "--task", "file:@adir", "--out", "@o2"},
         "@adir: it is a directory", 2},
        {"gradcheck --task file:FIFO", {"gradcheck", "--task", "file:@fifo"},
         "@fifo: it is a FIFO", 2},
        {"compare --task file:FIFO",
         {"compare", "--task", "file:@fifo", "--preset", "smoke", "--out", "@o3"},
         "@fifo: it is a FIFO", 2},
        {"eval --checkpoint FIFO", {"eval", "--checkpoint", "@fifo"}, "(a FIFO)", 1},
        {"eval of a run whose data file is a FIFO", {"eval", "--checkpoint", ckpt},
         "@moving.tsv: it is a FIFO", 1},
        {"eval --input FIFO",
         {"eval", "--checkpoint", "@stopped/checkpoint.ckpt", "--input", "@fifo"},
         "--input: cannot read @fifo: it is a FIFO", 1},
        {"eval --input DIR",
         {"eval", "--checkpoint", "@stopped/checkpoint.ckpt", "--input", "@adir"},
         "--input: cannot read @adir: it is a directory", 1},
        {"resume, args.txt a FIFO", {"train", "--resume", "@resume-0"},
         "@resume-0/args.txt: it is a FIFO", 1},
        {"resume, config.tsv a FIFO", {"train", "--resume", "@resume-1"},
         "@resume-1/config.tsv: it is a FIFO", 1},
        {"resume, train_log.tsv a FIFO", {"train", "--resume", "@resume-2"},
         "@resume-2/train_log.tsv: it is a FIFO", 1},
        {"report, config.tsv a FIFO", {"report", "@report-0"},
         "@report-0/runs/a/config.tsv: it is a FIFO", 1},
        {"report, build.tsv a FIFO", {"report", "@report-1"},
         "@report-1/runs/a/build.tsv: it is a FIFO", 1},
        {"report, train_log.tsv a FIFO", {"report", "@report-2"},
         "@report-2/runs/a/train_log.tsv: it is a FIFO", 1},
        {"report, eval.tsv a FIFO", {"report", "@report-3"},
         "@report-3/runs/a/eval.tsv: it is a FIFO", 1},
        {"report, eval_positions.tsv a FIFO", {"report", "@report-4"},
         "@report-4/runs/a/eval_positions.tsv: it is a FIFO", 1},
        {"report, cost.tsv a FIFO", {"report", "@report-5"},
         "@report-5/runs/a/cost.tsv: it is a FIFO", 1},
        {"report, manifest.tsv a FIFO", {"report", "@report-m"},
         "@report-m/manifest.tsv: it is a FIFO", -1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fifo_case *fc = &cases[c];
        char words[16][300], says[400];
        const char *args[17] = {NULL};
        size_t i = 0;
        for (; fc->args[i]; i++) {
            if (fc->args[i][0] == '@')
                ru_fmt(words[i], sizeof words[i], "%s/%s", tmpdir(), fc->args[i] + 1);
            else if (strncmp(fc->args[i], "file:@", 6) == 0)
                ru_fmt(words[i], sizeof words[i], "file:%s/%s", tmpdir(), fc->args[i] + 6);
            else
                ru_fmt(words[i], sizeof words[i], "%s", fc->args[i]);
            args[i] = words[i];
        }
        args[i] = NULL;
        const char *at = strchr(fc->says, '@');
        if (at)
            ru_fmt(says, sizeof says, "%.*s%s/%s", (int)(at - fc->says), fc->says, tmpdir(),
                   at + 1);
        else
            ru_fmt(says, sizeof says, "%s", fc->says);
        /* report needs no figure here: its plots folder is one that does not exist */
        setenv("ATTNLAB_PLOTS", RU_NO_PLOTS, 1);
        run_guarded(&r, fc->what, -1, 0, args);
        ck_assert_msg(strstr(r.err, says) != NULL, "%s: stderr does not say '%s': %s",
                      fc->what, says, r.err);
        if (fc->status >= 0)
            ck_assert_msg(r.status == fc->status, "%s: status %d (expected %d): %s", fc->what,
                          r.status, fc->status, r.err);
    }
    ru_remove_tree(tmpdir());
}
END_TEST

START_TEST(endless_or_unreadable_input_is_an_error)
{
    char out[160], ckpt[200];
    in_dir(out, sizeof out, "copyrun");
    run_out r;
    run_guarded(&r, "train", -1, 0,
                (const char *const[]){"train", "--steps", "2", "--hidden", "4", "--embed", "4",
                                      "--out", out, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ru_fmt(ckpt, sizeof ckpt, "%s/model.ckpt", out);
    /* an endless line: the address space is bounded so that, were the whole line kept,
     * memory would run out within a second rather than fill the machine */
    const int zero = open("/dev/zero", O_RDONLY);
    ck_assert_int_ge(zero, 0);
    run_guarded(&r, "eval --input - < /dev/zero", zero, UNDER_ASAN ? 0 : (rlim_t)2 << 30,
                (const char *const[]){"eval", "--checkpoint", ckpt, "--input", "-", NULL});
    close(zero);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "--input standard input line 1: the line holds more than "),
                  "%s", r.err);
    ck_assert_str_eq(r.out, "");
    /* standard input that cannot be read (open for writing only): a read error */
    char path[160];
    in_dir(path, sizeof path, "write-only");
    const int wo = open(path, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(wo, 0);
    run_guarded(&r, "eval --input - (unreadable)", wo, 0,
                (const char *const[]){"eval", "--checkpoint", ckpt, "--input", "-", NULL});
    close(wo);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "--input: cannot read standard input: "), "%s", r.err);
    /* a byte-order mark before the first line is no part of its first symbol */
    in_dir(path, sizeof path, "bom.txt");
    ru_spit(path, "\xef\xbb\xbf" "3 1 4\n", 9);
    run_guarded(&r, "eval --input with a BOM", -1, 0,
                (const char *const[]){"eval", "--checkpoint", ckpt, "--input", path, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "source:    3 1 4\n"), "%s", r.out);
    ru_remove_tree(tmpdir());
}
END_TEST

/* ---- data files: comments, a byte-order mark, a CRC-32 of 0 ----------------------------- */

START_TEST(comments_are_counted_and_a_bom_is_skipped)
{
    char *text = letters(30), err[256], about[512];
    const size_t len = strlen(text);
    /* the same file with a BOM and two more comments, one of them holding a tab */
    char *more = malloc(len + 64);
    const int k = sprintf(more, "\xef\xbb\xbf%s# a note\n#x y\ty x\n", text);
    dataset a, b;
    ck_assert_msg(dataset_parse(&a, text, len, "a.tsv", 8, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(dataset_parse(&b, more, (size_t)k, "b.tsv", 8, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_uint_eq(a.comments, 1);
    ck_assert_uint_eq(b.comments, 3);
    ck_assert_uint_eq(b.comments_tab, 1);
    ck_assert_int_eq(b.bom, 1);
    /* the BOM is no symbol: the same vocabulary and examples */
    ck_assert_uint_eq(a.V, b.V);
    ck_assert_uint_eq(a.n, b.n);
    for (size_t i = 0; i < a.V; i++)
        ck_assert_str_eq(a.words[i], b.words[i]);
    dataset_summary(&b, about, sizeof about);
    ck_assert_msg(strstr(about, "3 comment lines skipped (a comment is a line whose first "
                                "character is '#')") &&
                      strstr(about, "1 of them with a tab") &&
                      strstr(about, "byte-order mark skipped"),
                  "%s", about);
    dataset_free(&a);
    dataset_free(&b);
}
END_TEST

/* Appends to the len bytes at s (room for 4 more) the 4 bytes that make the CRC-32 of
 * the whole 0. CRC-32 is linear: going back from the register wanted at the end, the top
 * byte of each table entry is unique, which names the entry each of the 4 steps must
 * use; the bytes that select those entries from the register the text left follow. */
static void force_crc_zero(unsigned char *s, size_t len)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int b = 0; b < 8; b++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[i] = c;
    }
    uint32_t want = 0xFFFFFFFFu; /* the register whose inversion, the CRC, is 0 */
    unsigned idx[4];
    for (int k = 3; k >= 0; k--) {
        unsigned i = 0;
        while (table[i] >> 24 != want >> 24)
            i++;
        idx[k] = i;
        want = (want ^ table[i]) << 8;
    }
    uint32_t reg = crc32_update(0, s, len) ^ 0xFFFFFFFFu;
    for (int k = 0; k < 4; k++) {
        s[len + (size_t)k] = (unsigned char)((reg ^ idx[k]) & 0xFF);
        reg = table[idx[k]] ^ (reg >> 8);
    }
}

/* A data file of letters whose CRC-32 is 0: a last comment line ends in the 4 bytes
 * that make it so (its number changed until none of them is a line break). */
static void write_crc_zero_file(const char *path)
{
    char *text = letters(40);
    const size_t len = strlen(text);
    unsigned char *s = malloc(len + 64);
    for (unsigned tries = 0;; tries++) {
        ck_assert_uint_lt(tries, 1000);
        const int k = sprintf((char *)s, "%s# %u ", text, tries);
        force_crc_zero(s, (size_t)k);
        if (!memchr(s + k, '\n', 4) && !memchr(s + k, '\r', 4)) {
            ck_assert_uint_eq(crc32_update(0, s, (size_t)k + 4), 0);
            FILE *f = fopen(path, "wb");
            ck_assert_ptr_nonnull(f);
            ck_assert_uint_eq(fwrite(s, 1, (size_t)k + 4, f), (size_t)k + 4);
            ck_assert_int_eq(fclose(f), 0);
            break;
        }
    }
    free(s);
    free(text);
}

START_TEST(a_data_file_whose_crc_is_zero_is_checked)
{
    char data[128], task[160], out[160], path[200], text[8192];
    in_dir(data, sizeof data, "zero.tsv");
    write_crc_zero_file(data);
    ru_fmt(task, sizeof task, "file:%s", data);
    in_dir(out, sizeof out, "zerorun");
    run_out r;
    run_guarded(&r, "train on a file of CRC-32 0", -1, 0,
                (const char *const[]){"train", "--task", task, "--steps", "2", "--hidden", "4",
                                      "--embed", "4", "--out", out, "--quiet", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ru_fmt(path, sizeof path, "%s/config.tsv", out);
    cli_slurp(path, text, sizeof text);
    ck_assert_msg(strstr(text, "\ndata_crc\t0\n"), "%s", text);
    /* the file changes (one example twice: the same vocabulary): refused, as for any CRC */
    FILE *f = fopen(data, "ab");
    ck_assert_ptr_nonnull(f);
    fputs("\na b\tb a\n", f);
    ck_assert_int_eq(fclose(f), 0);
    ru_fmt(path, sizeof path, "%s/model.ckpt", out);
    run_guarded(&r, "eval after the file changed", -1, 0,
                (const char *const[]){"eval", "--checkpoint", path, NULL});
    ck_assert_msg(r.status == 1 && strstr(r.err, "has changed since the run was trained"),
                  "status %d: %s", r.status, r.err);
    ru_remove_tree(tmpdir());
}
END_TEST

START_TEST(a_run_of_an_earlier_version_still_resumes)
{
    /* a stopped run on a file whose CRC-32 is 0, its config.tsv as earlier versions
     * wrote it: without data_crc, which they left out while it was 0 */
    char data[128], task[160], out[160], path[200], text[8192];
    in_dir(data, sizeof data, "zero.tsv");
    write_crc_zero_file(data);
    ru_fmt(task, sizeof task, "file:%s", data);
    in_dir(out, sizeof out, "oldrun");
    const char *argv[] = {tu_program(), "train", "--task", task, "--steps", "100000",
                          "--hidden", "4", "--embed", "4", "--checkpoint-every", "5",
                          "--log-every", "5", "--out", out, "--quiet", NULL};
    const pid_t pid = cli_spawn_silent(argv, 0);
    ru_fmt(path, sizeof path, "%s/checkpoint.ckpt", out);
    for (int k = 0; k < 6000 && access(path, F_OK) != 0; k++)
        usleep(10000);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 143, "the run did not stop as asked");
    ru_fmt(path, sizeof path, "%s/config.tsv", out);
    cli_slurp(path, text, sizeof text);
    char *line = strstr(text, "\ndata_crc\t0\n");
    if (line) /* written by this version: taken out, as earlier ones never wrote it */
        memmove(line + 1, line + 12, strlen(line + 12) + 1);
    ru_spit(path, text, strlen(text));
    /* resumed to its end would take long: stop it again once it has gone on */
    ru_fmt(path, sizeof path, "%s/train_log.tsv", out);
    char before[8192];
    cli_slurp(path, before, sizeof before);
    const char *rargv[] = {tu_program(), "train", "--resume", out, "--quiet", NULL};
    char errp[200];
    ru_fmt(errp, sizeof errp, "%s/resume.err", tmpdir());
    const pid_t again = fork();
    ck_assert(again >= 0);
    if (again == 0) {
        const int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fe, 2);
        alarm(HANG_SECONDS);
        execv(rargv[0], (char *const *)(void *)rargv);
        _exit(127);
    }
    /* a resumed run rewrites its log at its next checkpoint; a refused one exits 1 */
    int done = 0;
    for (int k = 0; k < 6000 && !done; k++) {
        cli_slurp(path, text, sizeof text);
        done = strcmp(text, before) != 0 || waitpid(again, &st, WNOHANG) == again;
        if (!done)
            usleep(10000);
    }
    if (waitpid(again, &st, WNOHANG) == 0) {
        kill(again, SIGTERM);
        waitpid(again, &st, 0);
    }
    cli_slurp(errp, text, sizeof text);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 143,
                  "the old run did not resume (status %d): %s",
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1, text);
    ru_remove_tree(tmpdir());
}
END_TEST

Suite *make_input_suite(void)
{
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("readers");
    tcase_add_test(tc, every_reader_refuses_a_fifo_and_a_directory);
    tcase_add_test(tc, the_line_reader_tells_an_error_from_the_end);
    tcase_add_test(tc, memory_running_out_is_not_the_end_of_a_line);
    tcase_add_test(tc, comments_are_counted_and_a_bom_is_skipped);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("commands");
    tcase_add_test(tc, every_command_refuses_a_fifo_at_once);
    tcase_add_test(tc, endless_or_unreadable_input_is_an_error);
    tcase_add_test(tc, a_data_file_whose_crc_is_zero_is_checked);
    tcase_add_test(tc, a_run_of_an_earlier_version_still_resumes);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}
