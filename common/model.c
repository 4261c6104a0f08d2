/* model.c — looking models up in the registry (see model.h). */
#include "model.h"

#include <string.h>

const model_ops *model_lookup(const char *name)
{
    for (size_t k = 0; model_registry[k]; k++)
        if (strcmp(model_registry[k]->name, name) == 0)
            return model_registry[k];
    return NULL;
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
