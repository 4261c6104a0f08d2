/* testcli.c — running the attnlab program from the tests (see testcli.h). */
#include "testcli.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cli_slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = '\0';
    if (f)
        fclose(f);
}

void cli_run(run_out *r, const char *stdin_text, const char *const *args)
{
    char outp[] = "/tmp/attnlab-cli-out-XXXXXX", errp[] = "/tmp/attnlab-cli-err-XXXXXX";
    char inp[] = "/tmp/attnlab-cli-in-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp), fi = mkstemp(inp);
    ck_assert(fo >= 0 && fe >= 0 && fi >= 0);
    if (stdin_text)
        ck_assert(write(fi, stdin_text, strlen(stdin_text)) == (ssize_t)strlen(stdin_text));
    lseek(fi, 0, SEEK_SET);
    const char *argv[64] = {tu_program()};
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
    cli_slurp(outp, r->out, sizeof r->out);
    cli_slurp(errp, r->err, sizeof r->err);
    unlink(outp);
    unlink(errp);
    unlink(inp);
}

pid_t cli_spawn_silent(const char *const *argv, int own_group)
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

void cli_first_line(const char *dir, const char *name, char *buf, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cli_slurp(path, buf, n);
    buf[strcspn(buf, "\n")] = '\0';
}

size_t cli_count_lines(const char *s)
{
    size_t k = 0;
    for (; *s; s++)
        k += *s == '\n';
    return k;
}

int cli_same_file(const char *a, const char *b)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

int cli_has_temporary(const char *dir)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp*' | grep -q .", dir);
    return system(cmd) == 0;
}

void cli_remove(const char *path)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
}

void cli_tiny_lstm_run(const char *dir, const char *steps, const char *lr)
{
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"train", "--model", "lstm", "--hidden", "8",
                                            "--embed", "4", "--train-len", "3:5", "--steps",
                                            steps, "--lr", lr, "--seed", "3", "--eval-lengths",
                                            "4", "--samples", "8", "--out", dir, "--quiet",
                                            NULL});
    ck_assert_msg(r.status == 0, "train: %s", r.err);
}
