/* web_settings.c — the configuration of one of the page's runs from its settings, built
 * as `attnlab train` builds it (prefix: page_).
 *
 * Design. config_defaults, then the model's defaults, then each setting through
 * config_set; for a data file what the file decides (its vocabulary, its CRC-32 and,
 * unless given, the training range); the final evaluation's lengths as the command line
 * chooses them when none are given. Part of the page's entry point (web_run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/dataset.h"
#include "../core/eval.h"
#include "../core/model.h"
#include "../core/task.h"
#include "web_run.h"

/* ---- settings -------------------------------------------------------------------------- */

/* Reads "A,B,C" (whole numbers from 1 to max, at most PAGE_LENGTHS_MAX) into lens.
 * Returns the count, or 0 with one line in page_err. */
size_t page_parse_lengths(const char *text, size_t max, size_t *lens)
{
    size_t n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || *p < '0' || *p > '9' || v < 1 || v > max || n == PAGE_LENGTHS_MAX ||
            (*end && *end != ',')) {
            snprintf(page_err, sizeof page_err, "eval_lengths '%s' is not a list of lengths "
                     "(accepted: up to %d whole numbers from 1 to %zu, separated by commas)",
                     text, PAGE_LENGTHS_MAX, max);
            return 0;
        }
        lens[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0)
        snprintf(page_err, sizeof page_err, "eval_lengths is empty (accepted: lengths "
                 "separated by commas)");
    return n;
}

/* The configuration of a run from settings: lines or spaces of key=value, with the keys
 * of config.h (model first, whatever its place), plus eval_lengths=A,B,... and samples=N
 * for the final evaluation, as `attnlab train --model M --KEY VALUE ...` builds it. The
 * equivalent arguments are appended to args (one per line). Returns 0, or -1 with one line
 * in page_err. */
int page_configure(page_run *p, const char *settings, FILE *args)
{
    char buf[PAGE_SETTINGS_MAX], eval_spec[512] = "";
    config *c = &p->c;
    if (strlen(settings) >= sizeof buf) {
        snprintf(page_err, sizeof page_err, "the settings are longer than %zu bytes",
                 sizeof buf - 1);
        return -1;
    }
    /* the model, whose defaults come before every other setting */
    const model_ops *ops = NULL;
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *s = NULL, *kv = strtok_r(buf, " \t\r\n", &s); kv; kv = strtok_r(NULL, " \t\r\n", &s))
        if (strncmp(kv, "model=", 6) == 0 && !(ops = model_lookup(kv + 6))) {
            snprintf(page_err, sizeof page_err, "model: unknown model '%s' (accepted: %s)",
                     kv + 6, model_names());
            return -1;
        }
    config_defaults(c);
    if (!ops)
        ops = model_lookup(c->model);
    ops->defaults(c);
    snprintf(c->model, sizeof c->model, "%s", ops->name);
    fprintf(args, "--model\n%s\n", ops->name);
    int train_len_given = 0;
    p->samples = 256;
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *s = NULL, *kv = strtok_r(buf, " \t\r\n", &s); kv; kv = strtok_r(NULL, " \t\r\n", &s)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(page_err, sizeof page_err, "setting '%s' is not key=value", kv);
            return -1;
        }
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(kv, "model") == 0)
            continue;
        if (strcmp(kv, "eval_lengths") == 0) {
            snprintf(eval_spec, sizeof eval_spec, "%s", val);
            fprintf(args, "--eval-lengths\n%s\n", val);
            continue;
        }
        if (strcmp(kv, "samples") == 0) {
            char *end;
            unsigned long v = strtoul(val, &end, 10);
            if (*val < '0' || *val > '9' || *end || v < 1 || v > 1000000) {
                snprintf(page_err, sizeof page_err, "samples '%s' is not a whole number from "
                         "1 to 1000000", val);
                return -1;
            }
            p->samples = v;
            fprintf(args, "--samples\n%s\n", val);
            continue;
        }
        const config_field *f = config_find(kv);
        if (!f) {
            snprintf(page_err, sizeof page_err, "setting '%s': no such configuration key", kv);
            return -1;
        }
        if (config_set(c, f, val, page_err, sizeof page_err) != 0)
            return -1;
        train_len_given |= strcmp(f->name, "train_min") == 0 || strcmp(f->name, "train_max") == 0;
        char flag[64];
        config_flag_name(f, flag, sizeof flag);
        if (f->type == CFG_BOOL && strcmp(val, "1") == 0)
            fprintf(args, "--%s\n", flag);
        else
            fprintf(args, "--%s\n%s\n", flag, val);
    }
    if (!task_known(c->task)) {
        snprintf(page_err, sizeof page_err, "task: unknown task '%s' (accepted: %s)", c->task,
                 task_names());
        return -1;
    }
    /* a data file decides its vocabulary, its CRC-32 and, unless given, the training
     * range, as on the command line (task_file_config); then it is opened as the run
     * will open it, for the lengths of its test set */
    const task *t = NULL;
    if (task_is_file(c->task)) {
        const task_file_given given = {NULL, NULL, train_len_given ? "training lengths" : NULL};
        if (task_file_config(c, &given, page_err, sizeof page_err) != 0 ||
            !(t = task_open(c, page_err, sizeof page_err)))
            return -1; /* an unreadable file: its error names it */
    }
    if (config_check(c, page_err, sizeof page_err) != 0 ||
        ops->check(c, page_err, sizeof page_err) != 0) {
        task_close(t);
        return -1;
    }
    /* the final evaluation: the lengths given, else the command line's; a data file's
     * test set at every source length it holds */
    if (eval_spec[0] && !(p->nl = page_parse_lengths(eval_spec, c->max_len, p->lens))) {
        task_close(t);
        return -1;
    }
    if (t) {
        size_t *all = malloc((t->data->max_Ts + 1) * sizeof *all);
        const size_t na = all ? dataset_lengths(t->data, DATASET_TEST, 1, t->data->max_Ts,
                                                all) : 0;
        for (size_t k = 0; k < p->nl; k++) {
            size_t i = 0;
            while (i < na && all[i] != p->lens[k])
                i++;
            if (i == na) {
                snprintf(page_err, sizeof page_err, "eval_lengths: the test set of %s holds "
                         "no source of length %zu", c->task, p->lens[k]);
                free(all);
                task_close(t);
                return -1;
            }
        }
        if (p->nl == 0) {
            p->nl = na < PAGE_LENGTHS_MAX ? na : PAGE_LENGTHS_MAX;
            if (all)
                memcpy(p->lens, all, p->nl * sizeof *p->lens);
        }
        free(all);
        task_close(t);
    } else if (p->nl == 0) {
        p->nl = eval_default_lengths(c, p->lens, PAGE_LENGTHS_MAX);
    }
    return 0;
}
