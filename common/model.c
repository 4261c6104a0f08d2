/* model.c — looking models up in the registry, and the error path every model reports
 * through (see model.h). */
#include "model.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

const model_ops *model_lookup(const char *name)
{
    for (size_t k = 0; model_registry[k]; k++)
        if (strcmp(model_registry[k]->name, name) == 0)
            return model_registry[k];
    return NULL;
}

size_t model_rank(const char *name)
{
    size_t k = 0;
    while (model_registry[k] && strcmp(model_registry[k]->name, name) != 0)
        k++;
    return k;
}

const char *model_names(void)
{
    static char names[256];
    if (!names[0])
        for (size_t k = 0; model_registry[k]; k++) {
            if (k)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, model_registry[k]->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

/* The last message; one per process (the program runs one model at a time, and the
 * parallel runs of compare are separate processes). */
static char last_error[256];

void model_error_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)gsl_errno;
    snprintf(last_error, sizeof last_error, "%s (%s:%d)", reason ? reason : "GSL error",
             file ? file : "?", line);
}

void model_catch_errors(void)
{
    gsl_set_error_handler(model_error_handler);
}

const char *model_last_error(void)
{
    return last_error;
}
