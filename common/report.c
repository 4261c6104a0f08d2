/* report.c — matrices as labelled TSV and as terminal tables (see report.h). */
#include "report.h"

int report_write_matrix(FILE *f, const gsl_matrix *m, const char (*rows)[16],
                        const char (*cols)[16], const char *corner)
{
    fprintf(f, "%s", corner);
    for (size_t j = 0; j < m->size2; j++)
        fprintf(f, "\t%s", cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < m->size1; i++) {
        fprintf(f, "%s", rows[i]);
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, "\t%.6g", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

void report_print_matrix(FILE *f, const char *title, const gsl_matrix *m,
                         const char (*rows)[16], const char (*cols)[16])
{
    fprintf(f, "%s (%zu x %zu)\n%8s", title, m->size1, m->size2, "");
    for (size_t j = 0; j < m->size2; j++)
        fprintf(f, " %6.6s", cols[j]);
    fputc('\n', f);
    for (size_t i = 0; i < m->size1; i++) {
        fprintf(f, "%8.8s", rows[i]);
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, " %6.3f", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
    fputc('\n', f);
}
