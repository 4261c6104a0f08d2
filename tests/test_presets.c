/* test_presets.c — the experiments compare's presets set up: the arms of the controlled
 * experiment at equal parameters, the setups each sweeping preset trains and leaves out,
 * and a preset's own task.
 *
 * Design. The setups come from the models' tables (model_sweep: common/ names no model),
 * so what a preset trains is only visible in the commands compare makes: these tests read
 * them from --print-jobs, which starts nothing. The control's parameter counts come from
 * each model's n_params, the number build.tsv records for a run. The distance preset's
 * table (distance.tsv) is checked against the gaps the tasks define, on reports of the
 * fixture run (testreport.h) as copy and as reverse.
 */
#include <check.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/core/config.h"
#include "../common/core/model.h"
#include "../common/core/bleu.h"
#include "../common/core/task.h"
#include "testcli.h"
#include "testreport.h"
#include "testutil.h"

/* The parameters of model ops under setting ("" or one key=value), at symbols 10. */
static size_t params_of(const model_ops *ops, const char *setting)
{
    config c;
    char err[256], buf[256];
    config_defaults(&c);
    c.symbols = 10;
    ops->defaults(&c);
    snprintf(buf, sizeof buf, "%s", setting);
    char *eq = strchr(buf, '=');
    if (eq) {
        *eq = '\0';
        const config_field *f = config_find(buf);
        ck_assert_msg(f != NULL, "%s: '%s' is no setting", ops->name, setting);
        ck_assert_msg(config_set(&c, f, eq + 1, err, sizeof err) == 0, "%s: %s", ops->name, err);
    } else {
        ck_assert_msg(buf[0] == '\0', "%s: setting '%s' is not key=value", ops->name, setting);
    }
    ck_assert_msg(ops->check(&c, err, sizeof err) == 0, "%s %s: %s", ops->name, setting, err);
    return ops->n_params(&c);
}

/* The control's changed arms (every setting but the defaults, of every model that lists
 * a control) have parameters within 5% of each other, and there are at least two of
 * them, one with attention and one without. */
START_TEST(control_arms_have_equal_parameters)
{
    size_t lo = (size_t)-1, hi = 0, arms = 0;
    int with = 0, without = 0;
    for (size_t k = 0; model_registry[k]; k++) {
        const model_ops *ops = model_registry[k];
        const char *const *set = model_sweep_of(ops, "control");
        for (size_t i = 0; set && set[i]; i++) {
            const size_t n = params_of(ops, set[i]);
            if (!set[i][0])
                continue; /* the arm as it is: its size is the model's own */
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
            arms++;
            with |= ops->attends;
            without |= !ops->attends;
        }
    }
    ck_assert_msg(arms >= 2 && with && without,
                  "the control needs a changed arm with attention and one without (%zu arms)",
                  arms);
    ck_assert_msg((double)hi <= 1.05 * (double)lo,
                  "the control's arms differ by more than 5%% in parameters: %zu to %zu", lo,
                  hi);
}
END_TEST

/* Every setting a model lists for a preset is one the model accepts. */
START_TEST(every_sweep_setting_is_valid)
{
    static const char *const presets[] = {"full",      "capacity", "control",
                                          "positions", "bahdanau", NULL};
    size_t seen = 0;
    for (size_t k = 0; model_registry[k]; k++)
        for (size_t p = 0; presets[p]; p++) {
            const char *const *set = model_sweep_of(model_registry[k], presets[p]);
            for (size_t i = 0; set && set[i]; i++, seen++) {
                (void)params_of(model_registry[k], set[i]);
                /* a switch is passed as --KEY, so only its "on" can be listed */
                const char *eq = strchr(set[i], '=');
                char key[64];
                snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - set[i]) : 0, set[i]);
                const config_field *f = eq ? config_find(key) : NULL;
                ck_assert_msg(!f || f->type != CFG_BOOL || strcmp(eq + 1, "1") == 0,
                              "%s: the switch %s can only be listed as =1",
                              model_registry[k]->name, set[i]);
            }
        }
    ck_assert_msg(seen > 0, "no model lists a setup for any sweeping preset");
    ck_assert_ptr_null(model_sweep_of(model_registry[0], "no such preset"));
}
END_TEST

/* The models of the job lines of a --print-jobs output, "lstm lstm-hidden166 ..." (each
 * run's label: the last part of its --out before -sSEED). */
static void job_labels(const char *out, char *labels, size_t n)
{
    labels[0] = '\0';
    for (const char *at = out; (at = strstr(at, "/runs/")) != NULL; at += 6) {
        const char *end = strstr(at, "-s1 ");
        ck_assert_ptr_nonnull(end);
        const size_t len = strlen(labels);
        snprintf(labels + len, n - len, "%s%.*s", len ? " " : "", (int)(end - at - 6), at + 6);
    }
}

START_TEST(sweeping_presets_train_what_the_models_list)
{
    char dir[64], labels[512];
    snprintf(dir, sizeof dir, "/tmp/attnlab-presets-%ld", (long)getpid());
    run_out r;

    /* control: the arms the models list, a model that lists none left out */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "control", "--seeds", "1",
                                            "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "control: %s", r.err);
    job_labels(r.out, labels, sizeof labels);
    ck_assert_str_eq(labels, "lstm lstm-hidden166 rnn_attention rnn_attention-celllstm");
    ck_assert_ptr_nonnull(strstr(r.out, "--model=lstm --hidden=166 "));

    /* positions: the transformer's schemes beside the model without positions */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "positions", "--seeds", "1",
                                            "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "positions: %s", r.err);
    job_labels(r.out, labels, sizeof labels);
    ck_assert_str_eq(labels, "rnn_attention transformer-possinusoidal transformer-poslearned "
                             "transformer-posnone");
    ck_assert_ptr_nonnull(strstr(r.out, "--eval-lengths=2:96:2"));

    /* a model named in --models is trained once at its defaults, even unswept */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "positions", "--seeds", "1",
                                            "--models", "lstm", "--out", dir, "--print-jobs",
                                            NULL});
    ck_assert_msg(r.status == 0, "positions --models lstm: %s", r.err);
    job_labels(r.out, labels, sizeof labels);
    ck_assert_str_eq(labels, "lstm");

    /* capacity trains the unswept ones once, for reference */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "capacity", "--seeds", "1",
                                            "--models", "transformer", "--out", dir,
                                            "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "capacity: %s", r.err);
    job_labels(r.out, labels, sizeof labels);
    ck_assert_str_eq(labels, "transformer");
}
END_TEST

/* The headline's runs are runs of the learning-rate sweep: each job line of full (one per
 * model, at the rate it lists) is a job line of lrsweep, word for word, so the sweep's
 * runs at those rates are the headline's, and a rate changed in one preset and not the
 * other is caught. */
START_TEST(full_trains_the_sweeps_runs_at_one_rate_each)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/attnlab-presets-%ld", (long)getpid());
    run_out full, sweep;
    cli_run(&full, NULL, (const char *const[]){"compare", "--preset", "full", "--seeds", "1",
                                               "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(full.status == 0, "full: %s", full.err);
    cli_run(&sweep, NULL, (const char *const[]){"compare", "--preset", "lrsweep", "--seeds",
                                                "1", "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(sweep.status == 0, "lrsweep: %s", sweep.err);
    size_t models = 0;
    while (model_registry[models])
        models++;
    ck_assert_uint_eq(cli_count_lines(full.out), models);
    for (char *line = full.out, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        char *at = strstr(sweep.out, line);
        ck_assert_msg(at && (at == sweep.out || at[-1] == '\n') && at[strlen(line)] == '\n',
                      "full's job is no job of lrsweep: %s", line);
        ck_assert_ptr_nonnull(strstr(line, " --lr="));
    }
}
END_TEST

START_TEST(a_preset_sets_its_task_and_a_flag_overrides_it)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/attnlab-presets-%ld", (long)getpid());
    run_out r;
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "distance", "--seeds", "1",
                                            "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "distance: %s", r.err);
    ck_assert_uint_eq(cli_count_lines(r.out), 3);
    ck_assert_ptr_null(strstr(r.out, "--task=copy"));
    ck_assert_ptr_nonnull(strstr(r.out, "--task=reverse"));
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "distance", "--seeds", "1",
                                            "--task", "copy", "--out", dir, "--print-jobs",
                                            NULL});
    ck_assert_msg(r.status == 0, "distance --task copy: %s", r.err);
    ck_assert_ptr_null(strstr(r.out, "--task=reverse"));

    /* inrange tests every length it trains on, and no other */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "inrange", "--seeds", "1",
                                            "--out", dir, "--print-jobs", NULL});
    ck_assert_msg(r.status == 0, "inrange: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "--train-len=4:64 "));
    ck_assert_ptr_nonnull(strstr(r.out, "--eval-lengths=4:64:4 "));

    /* an unknown preset names the accepted ones */
    cli_run(&r, NULL, (const char *const[]){"compare", "--preset", "nope", "--out", dir,
                                            "--print-jobs", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "unknown preset 'nope' (accepted: "));
    ck_assert_ptr_nonnull(strstr(r.err, "positions"));
}
END_TEST

/* The gap of each output: the length at every position of copy, 2t + 1 in reverse, none
 * past the target. */
START_TEST(task_gaps_are_those_of_the_tasks)
{
    for (size_t L = 1; L <= 40; L++)
        for (size_t t = 0; t < L; t++) {
            ck_assert_uint_eq(task_gap(&task_copy, L, t), L);
            ck_assert_uint_eq(task_gap(&task_reverse, L, t), 2 * t + 1);
        }
    ck_assert_uint_eq(task_gap(&task_copy, 5, 5), 0);
    ck_assert_uint_eq(task_gap(&task_reverse, 5, 7), 0);
}
END_TEST

/* Checks every row of dir/distance.tsv: its gap is what the task says of its length and
 * position, and there is at least one row. */
static void check_distance(const char *dir, int reverse)
{
    char path[RU_PATH];
    ru_fmt(path, sizeof path, "%s/distance.tsv", dir);
    char *text = ru_slurp(path, NULL);
    ck_assert_msg(text != NULL, "no %s", path);
    static const char head[] = "model\tlen\tposition\tgap\tseeds\tacc_mean\tacc_min\tacc_max\n";
    ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "distance.tsv's header: %.60s", text);
    size_t rows = 0;
    for (const char *line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        unsigned L, pos, gap;
        ck_assert_msg(sscanf(line, "%*s %u %u %u", &L, &pos, &gap) == 3, "row: %.60s", line);
        ck_assert_msg(gap == (reverse ? 2 * pos - 1 : L), "len %u position %u: gap %u", L, pos,
                      gap);
        rows++;
    }
    ck_assert_msg(rows > 0, "distance.tsv has no row");
    free(text);
}

START_TEST(distance_table_has_each_tasks_gaps)
{
    char base[RU_PATH], out[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    static const ru_edit rev = {"config.tsv", RU_SET, "task", 0, "reverse"};
    for (int reverse = 0; reverse <= 1; reverse++) {
        const char *name = reverse ? "lstm-reverse-s1" : "lstm-s1";
        ru_make_run1(base, name, reverse ? &rev : NULL);
        char run[RU_PATH];
        ru_fmt(run, sizeof run, "%s/runs/%s", base, name);
        ru_fmt(out, sizeof out, "%s/report-%d", base, reverse);
        ru_result r;
        ru_run(&r, (const char *const[]){"report", "--out", out, run, NULL}, RU_NO_PLOTS, 0);
        ck_assert_msg(r.status == 0, "report: %s", r.err);
        ru_result_free(&r);
        check_distance(out, reverse);
    }
    ru_remove_tree(base);
}
END_TEST

/* bleu.tsv pools each run's counts over a bin of lengths (a corpus BLEU, not a mean of
 * per-length scores), and a run whose eval_bleu.tsv is impossible is refused by name. */
START_TEST(bleu_table_pools_the_counts_of_a_bin)
{
    char base[RU_PATH], run[RU_PATH], bad[RU_PATH], path[RU_PATH], out[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    ru_make_run1(base, "lstm-s1", NULL);
    ru_make_run1(base, "lstm-s2", NULL);
    ru_fmt(run, sizeof run, "%s/runs/lstm-s1", base);
    ru_fmt(bad, sizeof bad, "%s/runs/lstm-s2", base);
    /* lengths 2 and 4 of the fixture's eval.tsv: one perfect sentence, one poor one */
    static const char head[] = "model\tlen\tsamples\thyp_len\tref_len\tmatch1\ttotal1\t"
                               "match2\ttotal2\tmatch3\ttotal3\tmatch4\ttotal4\tbleu\n";
    static const char rows[] = "lstm\t2\t1\t10\t10\t10\t10\t9\t9\t8\t8\t7\t7\t1\n"
                               "lstm\t4\t1\t10\t12\t6\t10\t3\t9\t2\t8\t1\t7\t0.1\n";
    char text[1024];
    ru_fmt(text, sizeof text, "%s%s", head, rows);
    ru_fmt(path, sizeof path, "%s/eval_bleu.tsv", run);
    ru_spit(path, text, strlen(text));
    ru_fmt(text, sizeof text, "%slstm\t2\t1\t10\t10\t10\t10\t9\t9\t8\t8\t8\t7\t1\n", head);
    ru_fmt(path, sizeof path, "%s/eval_bleu.tsv", bad);
    ru_spit(path, text, strlen(text));

    ru_fmt(out, sizeof out, "%s/report", base);
    ru_result r;
    ru_run(&r, (const char *const[]){"report", "--out", out, run, bad, NULL}, RU_NO_PLOTS, 0);
    ck_assert_msg(r.status == 0, "report: %s", r.err);
    ck_assert_msg(strstr(r.err, "eval_bleu.tsv line 2: a match count above its total") != NULL,
                  "the impossible counts are not named: %s", r.err);
    ru_result_free(&r);

    /* the pooled counts of lengths 2 and 4 */
    const bleu_stats pooled = {{16, 12, 10, 8}, {20, 18, 16, 14}, 20, 22};
    ru_fmt(path, sizeof path, "%s/bleu.tsv", out);
    char *t = ru_slurp(path, NULL);
    ck_assert_ptr_nonnull(t);
    char want[128];
    ru_fmt(want, sizeof want, "\nlstm\t2\t6\t1\t2\t%.6f\t", bleu_score(&pooled));
    ck_assert_msg(strstr(t, want) != NULL, "no row %s in:\n%s", want + 1, t);
    ru_fmt(want, sizeof want, "\nlstm\tall\tall\t1\t2\t%.6f\t", bleu_score(&pooled));
    ck_assert_msg(strstr(t, want) != NULL, "no row %s in:\n%s", want + 1, t);
    free(t);
    ru_remove_tree(base);
}
END_TEST

/* sweep.tsv has a line per rate of a model trained at several, none otherwise; a run
 * short of 0.99 is written as a bound. */
START_TEST(sweep_table_lists_each_rate_of_a_swept_model)
{
    char base[RU_PATH], out[RU_PATH], path[RU_PATH], a[RU_PATH], b[RU_PATH];
    ru_fresh_dir(base, sizeof base);
    static const ru_edit fast = {"config.tsv", RU_SET, "lr", 0, "0.003"};
    ru_make_run1(base, "lstm-s1", NULL);
    ru_make_run1(base, "lstm-lr-s1", &fast);
    ru_fmt(a, sizeof a, "%s/runs/lstm-s1", base);
    ru_fmt(b, sizeof b, "%s/runs/lstm-lr-s1", base);
    for (int both = 0; both <= 1; both++) {
        ru_fmt(out, sizeof out, "%s/report-%d", base, both);
        ru_result r;
        ru_run(&r, (const char *const[]){"report", "--out", out, a, both ? b : NULL, NULL},
               RU_NO_PLOTS, 0);
        ck_assert_msg(r.status == 0, "report: %s", r.err);
        ru_result_free(&r);
        ru_fmt(path, sizeof path, "%s/sweep.tsv", out);
        char *t = ru_slurp(path, NULL);
        ck_assert_ptr_nonnull(t);
        size_t lines = 0;
        for (const char *q = t; (q = strchr(q, '\n')) != NULL; q++)
            lines++;
        ck_assert_msg(lines == (both ? 3u : 1u), "sweep.tsv has %zu lines:\n%s", lines, t);
        if (both) {
            ck_assert_msg(strstr(t, "\tlstm\t0.003\t1\t0\t> ") != NULL, "%s", t);
            ck_assert_msg(strstr(t, "\tlstm\t0.001\t1\t0\t> ") != NULL, "%s", t);
        }
        free(t);
    }
    ru_remove_tree(base);
}
END_TEST

/* The figures of these tables (distance, bleu, sweep) say why and draw nothing when
 * their table holds its header alone (a comparison they do not apply to), as capacity.gp
 * does: a script run by hand, or by the page, must not fail there. */
START_TEST(experiment_figures_skip_a_table_without_rows)
{
    if (!ru_have_gnuplot())
        return; /* the tables are still tested above */
    static const struct {
        const char *script, *head, *says;
    } figs[] = {
        {"distance", "model\tlen\tposition\tgap\tseeds\tacc_mean\tacc_min\tacc_max\n",
         "skipping distance"},
        {"bleu", "model\tlen_min\tlen_max\tseeds\tsentences\tbleu_mean\tbleu_min\tbleu_max\n",
         "skipping bleu"},
        {"sweep", "model\tbase\tlr\tseeds\treached\tsteps_median\tsteps_min\tsteps_max\t"
                  "best_median\tbest_min\tbest_max\n", "skipping sweep"},
    };
    char dir[RU_PATH], path[RU_PATH], cmd[4 * RU_PATH];
    ru_fresh_dir(dir, sizeof dir);
    ru_fmt(path, sizeof path, "%s/figures", dir);
    ru_mkdir_p(path);
    static const char vars[] = "train_min = 4\ntrain_max = 8\nchance = 0.1\nsymbols = 10\n"
                               "task = 'copy'\nmodels = \"lstm\"\nseeds = 1\n";
    ru_fmt(path, sizeof path, "%s/figure_vars.gp", dir);
    ru_spit(path, vars, strlen(vars));
    for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
        ru_fmt(path, sizeof path, "%s/%s.tsv", dir, figs[k].script);
        ru_spit(path, figs[k].head, strlen(figs[k].head));
        ru_fmt(path, sizeof path, "%s/out.txt", dir);
        ru_fmt(cmd, sizeof cmd, "gnuplot -e \"dir='%s'\" '%s/plots/%s.gp' > '%s' 2>/dev/null", dir,
               ru_src_root(), figs[k].script, path);
        const int st = system(cmd);
        ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s.gp failed",
                      figs[k].script);
        char *said = ru_slurp(path, NULL);
        ck_assert_msg(said && strstr(said, figs[k].says), "%s.gp said: %s", figs[k].script,
                      said ? said : "(nothing)");
        free(said);
    }
    ru_fmt(path, sizeof path, "%s/figures", dir);
    ck_assert_int_eq(ru_count_entries(path), 0);
    ru_remove_tree(dir);
}
END_TEST

Suite *make_presets_suite(void)
{
    Suite *s = suite_create("presets");
    TCase *tc = tcase_create("presets");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, control_arms_have_equal_parameters);
    tcase_add_test(tc, every_sweep_setting_is_valid);
    tcase_add_test(tc, sweeping_presets_train_what_the_models_list);
    tcase_add_test(tc, full_trains_the_sweeps_runs_at_one_rate_each);
    tcase_add_test(tc, a_preset_sets_its_task_and_a_flag_overrides_it);
    tcase_add_test(tc, task_gaps_are_those_of_the_tasks);
    tcase_add_test(tc, distance_table_has_each_tasks_gaps);
    tcase_add_test(tc, bleu_table_pools_the_counts_of_a_bin);
    tcase_add_test(tc, sweep_table_lists_each_rate_of_a_swept_model);
    tcase_add_test(tc, experiment_figures_skip_a_table_without_rows);
    suite_add_tcase(s, tc);
    return s;
}
