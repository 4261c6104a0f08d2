/* test_fsafe.c — what the commands delete, replace and write stays inside the directory
 * they were given, and no command writes into one of its own inputs.
 *
 * Each test of a symbolic link plants, inside the directory a command writes, a link to a
 * directory outside holding a file (trace/, figures/, trace/lstm/, runs/, .lock), runs
 * the built program and checks that the outside file is still there, unchanged (and that
 * nothing new appeared beside it). The rule they test is safedir.h's: a folder the
 * program writes into or empties must be a real directory, a link there is refused with
 * one line and status 1 before anything is written. The other tests: report --out inside
 * a run it merges, eval and attention into a run directory, and the lock every writing
 * command takes (report, eval, attention, bench). Runs the built program (testcli.h);
 * a lock is also taken in-process, to hold a directory while the program tries it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/cli/runlock.h"
#include "../common/cli/safedir.h"
#include "testcli.h"
#include "testutil.h"

/* What the planted outside file holds. */
#define KEEP "kept outside: not the program's\n"

/* Writes KEEP into dir/name, making dir (and one level above it) first. */
static void plant_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(KEEP, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Replaces whatever is at at (a file, a tree) by a symbolic link to target. */
static void plant_link(const char *target, const char *at)
{
    cli_remove(at);
    ck_assert_msg(symlink(target, at) == 0, "symlink %s", at);
}

/* Fails unless dir/name still holds KEEP. */
static void assert_kept(const char *dir, const char *name, const char *after)
{
    char path[512], text[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cli_slurp(path, text, sizeof text);
    ck_assert_msg(strcmp(text, KEEP) == 0, "%s: %s outside the directory was %s", after,
                  path, text[0] ? "changed" : "removed");
}

/* Does path exist (a link not followed)? */
static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Trains a tiny LSTM into dir (30 steps, a checkpoint every 10), its trace of "1 2 3" in
 * dir/trace/, with one more flag (NULL: none). Returns the exit status. */
static int tiny_run(const char *dir, const char *flag, run_out *r)
{
    cli_run(r, NULL,
            (const char *const[]){"train", "--model", "lstm", "--hidden", "8", "--embed", "4",
                                  "--steps", "30", "--train-len", "3:5", "--samples", "8",
                                  "--eval-lengths", "4", "--checkpoint-every", "10",
                                  "--trace", "1 2 3", "--quiet", "--out", dir, flag, NULL});
    return r->status;
}

/* The refusal of a link: one line, status 1, naming the entry. */
static void assert_refused_link(const run_out *r, const char *entry)
{
    ck_assert_msg(r->status == 1, "status %d: %s", r->status, r->err);
    ck_assert_uint_eq(cli_count_lines(r->err), 1);
    ck_assert_msg(strstr(r->err, entry) && strstr(r->err, "symbolic link"), "message: %s",
                  r->err);
}

/* ---- never through a link -------------------------------------------------------------- */

START_TEST(train_force_never_deletes_through_a_link)
{
    char dir[64], out[96], trace[96], ck[96], lock[96];
    snprintf(dir, sizeof dir, "/tmp/attnlab-fsf-%ld", (long)getpid());
    snprintf(out, sizeof out, "%s.outside", dir);
    snprintf(trace, sizeof trace, "%s/trace", dir);
    snprintf(ck, sizeof ck, "%s/model.ckpt", dir);
    run_out r;
    ck_assert_msg(tiny_run(dir, NULL, &r) == 0, "%s", r.err);
    /* trace/ a link to a directory holding tables of the names a trace has, and another */
    plant_file(out, "x.tsv");
    plant_file(out, "enc.cell.tsv");
    plant_link(out, trace);
    ck_assert_int_eq(tiny_run(dir, "--force", &r), 1);
    assert_refused_link(&r, trace);
    assert_kept(out, "x.tsv", "train --force");
    assert_kept(out, "enc.cell.tsv", "train --force");
    ck_assert_msg(exists(ck), "the refused --force removed the old run's model.ckpt");
    /* a .lock that is a link to where nothing is yet: never created there */
    cli_remove(trace);
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    plant_link(out, lock); /* a link to the outside directory itself */
    ck_assert_int_eq(tiny_run(dir, "--force", &r), 1);
    ck_assert_msg(strstr(r.err, ".lock is a symbolic link"), "message: %s", r.err);
    cli_remove(lock);
    char made[128];
    snprintf(made, sizeof made, "%s/made", out);
    plant_link(made, lock); /* dangling: O_CREAT would make it outside */
    ck_assert_int_eq(tiny_run(dir, "--force", &r), 1);
    ck_assert_msg(!exists(made), "the lock file was created outside, through .lock");
    assert_kept(out, "x.tsv", "train --force");
    cli_remove(lock);
    /* the links gone, --force goes */
    ck_assert_msg(tiny_run(dir, "--force", &r) == 0, "%s", r.err);
    cli_remove(dir);
    cli_remove(out);
}
END_TEST

START_TEST(resume_never_writes_through_a_link)
{
    char dir[64], out[96], trace[96], path[128];
    snprintf(dir, sizeof dir, "/tmp/attnlab-fsr-%ld", (long)getpid());
    snprintf(out, sizeof out, "%s.outside", dir);
    snprintf(trace, sizeof trace, "%s/trace", dir);
    run_out r;
    ck_assert_msg(tiny_run(dir, NULL, &r) == 0, "%s", r.err);
    /* stopped after its last checkpoint: the files of its end removed */
    static const char *const end[] = {"eval.tsv", "eval_positions.tsv", "model.ckpt",
                                      "build.tsv"};
    for (size_t k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, end[k]);
        ck_assert_int_eq(unlink(path), 0);
    }
    plant_file(out, "enc.cell.tsv");
    plant_link(out, trace);
    cli_run(&r, NULL, (const char *const[]){"train", "--resume", dir, "--quiet", NULL});
    assert_refused_link(&r, trace);
    assert_kept(out, "enc.cell.tsv", "train --resume");
    snprintf(path, sizeof path, "%s/eval.tsv", dir);
    ck_assert_msg(!exists(path), "the refused --resume finished the run");
    cli_remove(dir);
    cli_remove(out);
}
END_TEST

START_TEST(report_never_deletes_or_draws_through_a_link)
{
    char run[64], rep[96], out[96], at[128], below[128];
    snprintf(run, sizeof run, "/tmp/attnlab-fsp-%ld", (long)getpid());
    snprintf(rep, sizeof rep, "%s.report", run);
    snprintf(out, sizeof out, "%s.outside", run);
    run_out r;
    ck_assert_msg(tiny_run(run, NULL, &r) == 0, "%s", r.err);
    ck_assert_int_eq(mkdir(rep, 0755), 0);
    snprintf(below, sizeof below, "%s/lstm", out);
    plant_file(below, "x.tsv");        /* what an earlier report's copies would be */
    plant_file(below, "enc.cell.tsv"); /* a name the copy of the trace has */
    plant_file(out, "accuracy.png");   /* a name a figure has */
    /* trace/ a link: its subfolders would be emptied */
    snprintf(at, sizeof at, "%s/trace", rep);
    plant_link(out, at);
    cli_run(&r, NULL, (const char *const[]){"report", "--out", rep, run, NULL});
    assert_refused_link(&r, at);
    /* trace/lstm/ a link: the copies would be written into it */
    cli_remove(at);
    ck_assert_int_eq(mkdir(at, 0755), 0);
    snprintf(at, sizeof at, "%s/trace/lstm", rep);
    plant_link(below, at);
    cli_run(&r, NULL, (const char *const[]){"report", "--out", rep, run, NULL});
    assert_refused_link(&r, at);
    cli_remove(at);
    /* figures/ a link: the figures would be drawn into it */
    snprintf(at, sizeof at, "%s/figures", rep);
    plant_link(out, at);
    cli_run(&r, NULL, (const char *const[]){"report", "--out", rep, run, NULL});
    assert_refused_link(&r, at);
    snprintf(at, sizeof at, "%s/accuracy.tsv", rep);
    ck_assert_msg(!exists(at), "a refused report wrote its tables");
    assert_kept(below, "x.tsv", "report --out");
    assert_kept(below, "enc.cell.tsv", "report --out");
    assert_kept(out, "accuracy.png", "report --out");
    snprintf(at, sizeof at, "%s/figures", rep);
    cli_remove(at);
    /* the links gone, the report goes */
    cli_run(&r, NULL, (const char *const[]){"report", "--out", rep, run, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    cli_remove(run);
    cli_remove(rep);
    cli_remove(out);
}
END_TEST

START_TEST(eval_out_never_writes_through_a_link)
{
    char run[64], dir[96], out[96], ck[96], lock[128], at[128], made[128];
    snprintf(run, sizeof run, "/tmp/attnlab-fse-%ld", (long)getpid());
    snprintf(dir, sizeof dir, "%s.eval", run);
    snprintf(out, sizeof out, "%s.outside", run);
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    run_out r;
    ck_assert_msg(tiny_run(run, NULL, &r) == 0, "%s", r.err);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    plant_file(out, "eval.tsv");
    /* a .lock that is a dangling link into the outside directory: refused, not created */
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    snprintf(made, sizeof made, "%s/made", out);
    plant_link(made, lock);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "4",
                                            "--samples", "4", "--out", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, ".lock is a symbolic link"), "message: %s", r.err);
    ck_assert_msg(!exists(made), "the lock file was created outside, through .lock");
    cli_remove(lock);
    /* eval_positions.tsv a link to the outside directory's file: the link is replaced */
    snprintf(at, sizeof at, "%s/eval_positions.tsv", dir);
    char target[128];
    snprintf(target, sizeof target, "%s/eval.tsv", out);
    plant_link(target, at);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "4",
                                            "--samples", "4", "--out", dir, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    struct stat st;
    ck_assert_int_eq(lstat(at, &st), 0);
    ck_assert_msg(S_ISREG(st.st_mode), "eval_positions.tsv is still the link");
    assert_kept(out, "eval.tsv", "eval --out");
    cli_remove(run);
    cli_remove(dir);
    cli_remove(out);
}
END_TEST

START_TEST(attention_out_never_writes_through_a_link)
{
    char run[64], out[96], ck[96], trace[96];
    snprintf(run, sizeof run, "/tmp/attnlab-fsa-%ld", (long)getpid());
    snprintf(out, sizeof out, "%s.outside", run);
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    snprintf(trace, sizeof trace, "%s/trace", run);
    run_out r;
    ck_assert_msg(tiny_run(run, NULL, &r) == 0, "%s", r.err);
    plant_file(out, "enc.cell.tsv");
    plant_link(out, trace);
    /* the run's trace/, by default and named by --out */
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3", NULL});
    assert_refused_link(&r, trace);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3", "--out", trace, NULL});
    assert_refused_link(&r, trace);
    assert_kept(out, "enc.cell.tsv", "attention --out");
    /* a real trace/ again: written, the outside untouched */
    cli_remove(trace);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3", "--out", trace, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    assert_kept(out, "enc.cell.tsv", "attention --out");
    cli_remove(run);
    cli_remove(out);
}
END_TEST

/* A comparison of one lstm run of the smoke preset, 12 steps, into dir. */
static void one_run_compare(run_out *r, const char *dir)
{
    cli_run(r, NULL, (const char *const[]){"compare", "--preset", "smoke", "--models", "lstm",
                                           "--steps", "12", "--eval-lengths", "2:8:2",
                                           "--samples", "8", "--jobs", "1", "--out", dir,
                                           NULL});
}

START_TEST(compare_never_writes_through_a_link)
{
    char dir[64], out[96], at[96], below[128];
    snprintf(dir, sizeof dir, "/tmp/attnlab-fsc-%ld", (long)getpid());
    snprintf(out, sizeof out, "%s.outside", dir);
    snprintf(below, sizeof below, "%s/lstm", out);
    plant_file(below, "x.tsv");
    plant_file(out, "x.tsv");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    run_out r;
    /* its report's trace/, its runs/, one run directory: each refused before any run */
    static const char *const links[] = {"trace", "runs", "runs/lstm-s1"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(at, sizeof at, "%s/%s", dir, links[k]);
        if (k == 2) {
            snprintf(below, sizeof below, "%s/runs", dir);
            ck_assert_int_eq(mkdir(below, 0755), 0);
        }
        plant_link(out, at);
        one_run_compare(&r, dir);
        assert_refused_link(&r, at);
        snprintf(below, sizeof below, "%s/lstm", out);
        assert_kept(below, "x.tsv", "compare");
        assert_kept(out, "x.tsv", "compare");
        static const char *const runs[] = {"lstm-s1", "args.txt"};
        for (size_t j = 0; j < 2; j++) {
            snprintf(below, sizeof below, "%s/%s", out, runs[j]);
            ck_assert_msg(!exists(below), "a run was written outside, through %s", links[k]);
        }
        cli_remove(at);
    }
    cli_remove(dir);
    cli_remove(out);
}
END_TEST

/* ---- no command writes into its inputs ----------------------------------------------------- */

START_TEST(report_refuses_an_out_inside_a_run_it_merges)
{
    char a[64], b[64], rep[64], in[96], path[128];
    snprintf(a, sizeof a, "/tmp/attnlab-fsi-a-%ld", (long)getpid());
    snprintf(b, sizeof b, "/tmp/attnlab-fsi-b-%ld", (long)getpid());
    snprintf(rep, sizeof rep, "/tmp/attnlab-fsi-r-%ld", (long)getpid());
    run_out r;
    ck_assert_msg(tiny_run(a, NULL, &r) == 0, "%s", r.err);
    ck_assert_msg(tiny_run(b, "--seed=2", &r) == 0, "%s", r.err);
    /* the run itself, inside it (not made yet), and the run by another spelling */
    snprintf(in, sizeof in, "%s/merged", a);
    char other[128];
    snprintf(other, sizeof other, "%s/../%s", b, strrchr(a, '/') + 1);
    const char *const outs[] = {a, in, other};
    for (size_t k = 0; k < 3; k++) {
        cli_run(&r, NULL, (const char *const[]){"report", "--out", outs[k], a, b, NULL});
        ck_assert_msg(r.status == 2, "--out %s: status %d: %s", outs[k], r.status, r.err);
        ck_assert_uint_eq(cli_count_lines(r.err), 2); /* the line, then the hint */
        ck_assert_msg(strstr(r.err, "--out") && strstr(r.err, "one of the runs merged"),
                      "message: %s", r.err);
    }
    snprintf(path, sizeof path, "%s/summary.tsv", a);
    ck_assert_msg(!exists(path), "the report was written into the run");
    ck_assert_msg(!exists(in), "the report made a folder inside the run");
    /* the run is still a run every later report merges */
    cli_run(&r, NULL, (const char *const[]){"report", "--out", rep, a, b, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(!strstr(r.err, "attnlab report: skipping"), "a run was skipped: %s", r.err);
    cli_remove(a);
    cli_remove(b);
    cli_remove(rep);
}
END_TEST

START_TEST(eval_and_attention_leave_a_run_directory_alone)
{
    char run[64], ck[96], path[128], keep[128];
    snprintf(run, sizeof run, "/tmp/attnlab-fsv-%ld", (long)getpid());
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    snprintf(path, sizeof path, "%s/eval.tsv", run);
    snprintf(keep, sizeof keep, "%s.eval.tsv", run);
    run_out r;
    ck_assert_msg(tiny_run(run, NULL, &r) == 0, "%s", r.err);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, keep);
    ck_assert_int_eq(system(cmd), 0);
    cli_run(&r, NULL, (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "4",
                                            "--samples", "1", "--out", run, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_uint_eq(cli_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "holds a run of attnlab train") && strstr(r.err, "eval.tsv"),
                  "message: %s", r.err);
    ck_assert_msg(cli_same_file(path, keep), "eval --out replaced the run's eval.tsv");
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3", "--out", run, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "holds a run of attnlab train"), "message: %s", r.err);
    snprintf(path, sizeof path, "%s/enc.cell.tsv", run);
    ck_assert_msg(!exists(path), "attention wrote among the run's files");
    cli_remove(run);
    cli_remove(keep);
}
END_TEST

START_TEST(every_writer_takes_the_lock_of_its_directory)
{
    char run[64], dir[96], err[256], pid[32], ck[96], path[160];
    snprintf(run, sizeof run, "/tmp/attnlab-fsl-%ld", (long)getpid());
    snprintf(dir, sizeof dir, "%s.out", run);
    snprintf(ck, sizeof ck, "%s/model.ckpt", run);
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    run_out r;
    ck_assert_msg(tiny_run(run, NULL, &r) == 0, "%s", r.err);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    /* dir held, as by a report or a train running there */
    runlock held;
    ck_assert_msg(runlock_take(&held, dir, err, sizeof err) == 0, "%s", err);
    const char *const *cmds[] = {
        (const char *const[]){"report", "--out", dir, run, NULL},
        (const char *const[]){"eval", "--checkpoint", ck, "--lengths", "4", "--samples", "2",
                              "--out", dir, NULL},
        (const char *const[]){"attention", "--checkpoint", ck, "--input", "1 2 3", "--out",
                              dir, NULL},
        (const char *const[]){"bench", "--models", "lstm", "--lengths", "4", "--reps", "1",
                              "--out", dir, NULL},
    };
    for (size_t k = 0; k < 4; k++) {
        cli_run(&r, NULL, cmds[k]);
        ck_assert_msg(r.status == 1, "%s: status %d: %s", cmds[k][0], r.status, r.err);
        ck_assert_msg(cli_count_lines(r.err) == 1 && strstr(r.err, "in use") &&
                          strstr(r.err, pid),
                      "%s: message: %s", cmds[k][0], r.err);
    }
    static const char *const none[] = {"summary.tsv", "eval.tsv", "enc.cell.tsv",
                                       "bench.tsv"};
    for (size_t k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, none[k]);
        ck_assert_msg(!exists(path), "%s was written into a directory in use", none[k]);
    }
    runlock_release(&held);
    /* the run held (a train writing it): attention into its trace/ waits its turn */
    ck_assert_msg(runlock_take(&held, run, err, sizeof err) == 0, "%s", err);
    cli_run(&r, NULL, (const char *const[]){"attention", "--checkpoint", ck, "--input",
                                            "1 2 3", NULL});
    ck_assert_msg(r.status == 1 && strstr(r.err, "in use"), "attention: %s", r.err);
    runlock_release(&held);
    /* free again: the report goes */
    cli_run(&r, NULL, (const char *const[]){"report", "--out", dir, run, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    cli_remove(run);
    cli_remove(dir);
}
END_TEST

START_TEST(a_comparison_being_written_is_not_reported_by_another)
{
    char dir[64], err[256], path[128];
    snprintf(dir, sizeof dir, "/tmp/attnlab-fsk-%ld", (long)getpid());
    run_out r;
    one_run_compare(&r, dir);
    ck_assert_msg(r.status == 0, "%s", r.err);
    snprintf(path, sizeof path, "%s/summary.tsv", dir);
    ck_assert_int_eq(unlink(path), 0);
    /* held as compare holds it while it runs and draws its own report */
    runlock held;
    ck_assert_msg(runlock_take(&held, dir, err, sizeof err) == 0, "%s", err);
    cli_run(&r, NULL, (const char *const[]){"report", dir, NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "in use"), "message: %s", r.err);
    ck_assert_msg(!exists(path), "a report wrote into a comparison in use");
    runlock_release(&held);
    cli_run(&r, NULL, (const char *const[]){"report", dir, NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(exists(path), "the report once free wrote no summary.tsv");
    cli_remove(dir);
}
END_TEST

/* ---- the functions themselves ------------------------------------------------------------ */

START_TEST(safedir_places_paths_as_they_will_be)
{
    char top[64], sub[128], link[128], p[256];
    snprintf(top, sizeof top, "/tmp/attnlab-fsw-%ld", (long)getpid());
    snprintf(sub, sizeof sub, "%s/run", top);
    ck_assert_int_eq(mkdir(top, 0755), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    snprintf(link, sizeof link, "%s/alias", top);
    ck_assert_int_eq(symlink("run", link), 0);
    ck_assert_int_eq(safedir_within(sub, sub), 1);
    snprintf(p, sizeof p, "%s/not/yet", sub);
    ck_assert_int_eq(safedir_within(p, sub), 1);
    snprintf(p, sizeof p, "%s/x/../../run2", sub); /* names applied: beside it */
    ck_assert_int_eq(safedir_within(p, sub), 0);
    snprintf(p, sizeof p, "%s/new", link); /* through a link the user typed: inside */
    ck_assert_int_eq(safedir_within(p, sub), 1);
    snprintf(p, sizeof p, "%s/run2", top); /* a shared prefix is not inside */
    ck_assert_int_eq(safedir_within(p, sub), 0);
    ck_assert_int_eq(safedir_within(top, sub), 0);
    /* safedir_check: absent is fine, a link or a file is named */
    char err[512];
    ck_assert_int_eq(safedir_check(top, "run/a/b", err, sizeof err), 0);
    ck_assert_int_eq(safedir_check(top, "alias/a", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "alias is a symbolic link"), "%s", err);
    snprintf(p, sizeof p, "%s/run/file", top);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(safedir_check(top, "run/file", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "is not a directory"), "%s", err);
    /* safedir_clear removes a link in the folder, never what it points to */
    snprintf(p, sizeof p, "%s/run/a.tsv", top);
    ck_assert_int_eq(symlink("file", p), 0);
    ck_assert_int_eq(safedir_clear(top, "run", 0, ".tsv", err, sizeof err), 0);
    ck_assert(!exists(p));
    snprintf(p, sizeof p, "%s/run/file", top);
    ck_assert(exists(p));
    ck_assert_int_eq(safedir_clear(top, "alias", 0, ".tsv", err, sizeof err), -1);
    cli_remove(top);
}
END_TEST

Suite *make_fsafe_suite(void)
{
    Suite *s = suite_create("fsafe");
    TCase *tc = tcase_create("links");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, train_force_never_deletes_through_a_link);
    tcase_add_test(tc, resume_never_writes_through_a_link);
    tcase_add_test(tc, report_never_deletes_or_draws_through_a_link);
    tcase_add_test(tc, eval_out_never_writes_through_a_link);
    tcase_add_test(tc, attention_out_never_writes_through_a_link);
    tcase_add_test(tc, compare_never_writes_through_a_link);
    tcase_add_test(tc, safedir_places_paths_as_they_will_be);
    suite_add_tcase(s, tc);
    tc = tcase_create("inputs");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, report_refuses_an_out_inside_a_run_it_merges);
    tcase_add_test(tc, eval_and_attention_leave_a_run_directory_alone);
    tcase_add_test(tc, every_writer_takes_the_lock_of_its_directory);
    suite_add_tcase(s, tc);
    /* compare starts the program itself for its run: under qemu-user without binfmt
     * (.ci/arm64.sh) the kernel cannot start an arm64 program, so this is left out there */
    tc = tcase_create("compare_runs");
    tcase_set_tags(tc, "noqemu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_comparison_being_written_is_not_reported_by_another);
    suite_add_tcase(s, tc);
    return s;
}
