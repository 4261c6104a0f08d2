/* cmd_report.c — attnlab report: merges finished runs into tables, figures and
 * report.html; compare merges its own runs the same way at its end (cmd_report_dir).
 *
 * Design. The paths given are comparison directories (their runs/ taken, sorted by name
 * so the tables come out the same every time) or run directories; all of them go into
 * one static list, and summary_report does the rest (summary.h). A report never writes
 * into one of the runs it merges, and one report at a time writes a directory (its
 * lock, as train and compare take theirs). A report into a directory of its own (not a
 * comparison directory, whose manifest is compare's) writes manifest.tsv there: the
 * command, the build that merged, and the manifest of each comparison directory given,
 * so a figure made of two comparisons names the commits that trained both.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/afile.h"
#include "../core/tsv.h"
#include "args.h"
#include "cmd.h"
#include "cmd_files.h"
#include "report.h"
#include "runlock.h"
#include "safedir.h"
#include "summary.h"

/* Runs a command lists and report merges, at most. */
#define MAX_RUNS 4096

/* Run directories collect_runs found but had no room for: a report refuses to merge
 * a part of what it was given (merge_runs). */
static size_t runs_left_out;

/* ---- the runs of a report ------------------------------------------------------------------- */


/* Orders two entries of a list of paths (char[AFILE_PATH_MAX] each) by strcmp. */
static int compare_paths(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Appends the run directories under path (a comparison directory's runs/, sorted by
 * name, or path itself when it has no runs/) to list, from entry have on, at most max
 * in all. Returns the number added. Runs beyond max are not silently dropped: they are
 * counted, and merge_runs then refuses with the limit. */
static size_t collect_runs(const char *path, char (*list)[AFILE_PATH_MAX], size_t max,
                           size_t have)
{
    char runs[AFILE_PATH_MAX];
    size_t added = 0;
    if (afile_join(runs, sizeof runs, path, "runs") == 0 && access(runs, F_OK) == 0) {
        DIR *d = opendir(runs);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char slot[AFILE_PATH_MAX];
            if (afile_join(slot, sizeof slot, runs, e->d_name) != 0 ||
                !cmd_exists_in(slot, "config.tsv"))
                continue;
            if (have + added == max) {
                runs_left_out++;
                continue;
            }
            memcpy(list[have + added++], slot, sizeof slot);
        }
        if (d)
            closedir(d);
        /* readdir order is arbitrary: sort so tables come out the same every time */
        qsort(list + have, added, sizeof *list, compare_paths);
    } else if (have < max) {
        snprintf(list[have], AFILE_PATH_MAX, "%s", path);
        added = 1;
    } else {
        runs_left_out++;
    }
    return added;
}

/* The run directories of one report (16 MiB: static, and one report per process). */
static char run_list[MAX_RUNS][AFILE_PATH_MAX];

/* Merges the nr runs of run_list into out, whose lock the caller holds. Returns the exit
 * status. */
static int merge_runs(size_t nr, const char *out)
{
    static const char *ptr[MAX_RUNS];
    char err[ARGS_ERR_MAX];
    if (runs_left_out)
        return args_run_error("more than %d run directories (%zu found): the limit of one "
                              "report; merge fewer at once", MAX_RUNS, nr + runs_left_out);
    for (size_t i = 0; i < nr; i++)
        ptr[i] = run_list[i];
    if (summary_report(ptr, nr, out, stdout, err, sizeof err) != 0)
        return args_run_error("%s", err);
    return 0;
}

int cmd_report_dir(const char *dir)
{
    return merge_runs(collect_runs(dir, run_list, MAX_RUNS, 0), dir);
}

/* ---- the manifest of a report --------------------------------------------------------------- */

/* What a report's manifest is written from: its command line and the paths it merged. */
typedef struct report_manifest {
    int argc;
    char **argv;
    const char *const *paths;
    size_t np;
} report_manifest;

/* manifest.tsv: key<TAB>value, the command as typed and the build facts, then for the
 * k-th path given (from 1) "inputK" and its path, and each row of its manifest.tsv (a
 * comparison directory's) under "inputK.KEY". A manifest that cannot be read as two
 * columns of text is named as such rather than copied. */
static int write_report_manifest(FILE *f, const void *p)
{
    const report_manifest *m = p;
    cmd_manifest_head(f, m->argc, m->argv);
    for (size_t k = 0; k < m->np; k++) {
        char path[AFILE_PATH_MAX], err[256];
        fprintf(f, "input%zu\t", k + 1);
        cmd_shell_word(f, m->paths[k]);
        fputc('\n', f);
        if (afile_join(path, sizeof path, m->paths[k], "manifest.tsv") != 0 ||
            !cmd_exists_in(m->paths[k], "manifest.tsv"))
            continue;
        tsv t;
        if (tsv_read(&t, path, err, sizeof err) != 0 || t.cols != 2) {
            fprintf(f, "input%zu.manifest\tnot read (not two columns of text)\n", k + 1);
            tsv_free(&t);
            continue;
        }
        for (size_t r = 0; r < t.rows; r++)
            fprintf(f, "input%zu.%s\t%s\n", k + 1, tsv_get(&t, r, 0), tsv_get(&t, r, 1));
        tsv_free(&t);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- attnlab report ------------------------------------------------------------------------ */

void cmd_report_help(void)
{
    printf(
        "Usage: attnlab report [--out DIR] [--lang en|zh] PATH...\n"
        "\n"
        "Merges finished runs and draws the figures. Each PATH is a comparison directory\n"
        "(its runs/ are taken) or a run directory written by 'attnlab train'. Writes into\n"
        "DIR (default: the first PATH when it is a comparison directory) the tables\n"
        "accuracy, positions, curves, budget, convergence, capacity, cost and summary\n"
        "(.tsv), the figures (figures/, by gnuplot with plots/NAME.gp) and report.html,\n"
        "one self-contained page with the figures inside it. It prints the summary and\n"
        "how each model's runs ended (convergence: steps and seconds to the best\n"
        "validation). For a task read from a file, also bleu.tsv (BLEU-4 per bin of\n"
        "source lengths) and bleu-table.tsv (BLEU-4 of every test sentence per group),\n"
        "each group labelled as its paper names it where its model says (RNNsearch-50).\n"
        "Several comparison directories of one task merge into one report (runs of\n"
        "different tasks or test sets are refused); a DIR of its own gets manifest.tsv,\n"
        "the command and build with each comparison's manifest.\n"
        "\n"
        "  --out DIR      where everything goes: not one of the runs merged, nor inside\n"
        "                 one; one report at a time writes a DIR (its lock)\n"
        "  --lang en|zh   the language of the page: en (default) writes report.html, zh\n"
        "                 writes report.zh.html, its headings, tables and captions in\n"
        "                 Chinese, and the figures' labels where fontconfig finds a\n"
        "                 Chinese font (else English, said once)\n"
        "\n"
        "Examples:\n"
        "  attnlab report results/demo\n"
        "  attnlab report --lang zh results/demo\n"
        "  attnlab report --out results/merged runs/A-s1 runs/A-s2 runs/B-s1\n"
        "  attnlab report --out results/bahdanau results/bahdanau/30 results/bahdanau/50\n");
}

int cmd_report(int argc, char **argv)
{
    /* the paths are operands mixed with one flag: a plain loop reads them in order */
    const char *out = NULL;
    const char *paths[256];
    size_t np = 0;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            cmd_report_help();
            return 0;
        }
        if (strcmp(argv[k], "--out") == 0 || strncmp(argv[k], "--out=", 6) == 0) {
            if (argv[k][5] == '=')
                out = argv[k] + 6;
            else if (k + 1 < argc)
                out = argv[++k];
            else
                return args_usage_error("flag '--out' needs a value");
            /* empty, or longer than a path may be; a newline is fine here (report keeps no
             * args.txt, and gnuplot never sees the path) */
            if (!*out)
                return args_usage_error("--out: empty path (accepted: a path of 1 to %d "
                                        "characters)", ARGS_PATH_MAX);
            if (strlen(out) > ARGS_PATH_MAX)
                return args_usage_error("--out: the path is %zu characters long (accepted: "
                                        "at most %d)", strlen(out), ARGS_PATH_MAX);
            continue;
        }
        if (strcmp(argv[k], "--lang") == 0 || strncmp(argv[k], "--lang=", 7) == 0) {
            const char *code = argv[k][6] == '=' ? argv[k] + 7 : k + 1 < argc ? argv[++k] : NULL;
            report_lang lang;
            if (!code)
                return args_usage_error("flag '--lang' needs a value (accepted: %s)",
                                        REPORT_LANGS);
            if (report_lang_parse(code, &lang) != 0)
                return args_usage_error("--lang: '%s' is not a language of the page "
                                        "(accepted: %s)", code, REPORT_LANGS);
            report_set_lang(lang);
            continue;
        }
        if (argv[k][0] == '-')
            return args_usage_error("unknown flag '%s' (accepted: --out DIR, --lang en|zh, "
                                    "--help)", argv[k]);
        if (np == 256)
            return args_usage_error("more than 256 paths");
        paths[np++] = argv[k];
    }
    if (np == 0)
        return args_usage_error("no PATH given (a comparison directory or run directories)");
    size_t nr = 0;
    for (size_t i = 0; i < np; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode))
            return args_run_error("%s is not a directory (accepted: a comparison directory "
                                  "or a run directory)", paths[i]);
        nr += collect_runs(paths[i], run_list, MAX_RUNS, nr);
    }
    if (!out) {
        if (!cmd_exists_in(paths[0], "runs"))
            return args_usage_error("--out DIR is required when merging run directories");
        out = paths[0];
    }
    /* the report's files would replace a run's own (its cost.tsv, its trace/); a path
     * that holds no run (skipped later, with a line) is not an input to protect */
    for (size_t i = 0; i < nr; i++)
        if (safedir_within(out, run_list[i]) && cmd_holds_run(run_list[i]))
            return args_usage_error("--out: %s would put the report into %s, one of the "
                                    "runs merged (accepted: a directory outside every run "
                                    "given)", out, run_list[i]);
    /* one writer at a time, like train and compare: two reports of one directory would
     * remove and draw each other's traces and figures */
    char err[ARGS_ERR_MAX];
    runlock lock = {-1};
    int rc = afile_mkdirs(out, err, sizeof err);
    if (rc != 0)
        return args_run_error("--out: %s", err);
    rc = runlock_take(&lock, out, err, sizeof err);
    if (rc != 0)
        return args_run_error(rc == RUNLOCK_IN_USE ? "%s; wait for it to end, or choose "
                              "another --out" : "--out: %s", err);
    /* written once the runs are read and their tables written, before the page that
     * shows it: a refused report leaves an earlier manifest as it was */
    const report_manifest mf = {argc, argv, paths, np};
    if (!cmd_exists_in(out, "runs"))
        summary_set_manifest(write_report_manifest, &mf);
    rc = merge_runs(nr, out);
    summary_set_manifest(NULL, NULL);
    runlock_release(&lock);
    return rc;
}
