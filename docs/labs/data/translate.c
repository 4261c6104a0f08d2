/* translate.c — writes a toy translation data set: sentences of a small English-like
 * source language and their translations into an invented target language with its own
 * word order, 5 to 64 source words long (make translate-data: build/data/translate.tsv).
 *
 * Design. Each line is one example, SOURCE<TAB>TARGET (the format of `--task file:PATH`,
 * docs/results-format.md). A sentence is one to several clauses joined by "and"; a clause
 * is subject, verb, object and sometimes a place:
 *
 *     source   NP_subj VERB NP_obj [PREP NP]                  (subject-verb-object)
 *     target   NP_subj' wa [NP' PREP'] NP_obj' VERB'           (verb last)
 *
 *     source   DET|NUMBER ADJ* NOUN [that VERB NP]            (a noun phrase)
 *     target   [NP' VERB_rel] NOUN ADJ'* (mirrored) [NUMBER'] [ta|nel]
 *
 * so the target moves the verb behind the object (a reordering over the whole object,
 * relative clause included), puts a relative clause before its noun, mirrors the
 * adjectives after the noun, turns prepositions into postpositions, drops "a", writes
 * "the" as "ta" at the end of its phrase, and inserts the subject marker "wa". It agrees:
 * a plural noun's adjectives take their plural form and a verb takes the number of its
 * subject. Every word maps to its own target word (dictionary below), so the right
 * alignment of every example is known from these rules: monotonic inside a clause's
 * subject, local reorderings inside noun phrases, long-range ones for verbs and relative
 * clauses.
 *
 * Lengths: for each source length from MIN_LEN to MAX_LEN, PER_LEN sentences, each drawn
 * with a complexity (clauses, adjectives, relative clauses, places) suited to the length
 * and kept only when it has exactly that many words; no source sentence is written twice,
 * so no test example is also a training example. Targets come out about as long as their
 * sources (one word is dropped for every "a", one inserted for every subject).
 *
 * Invariant: the output depends on nothing but this file. The draws come from its own
 * 64-bit linear congruential generator (Knuth's MMIX constants), not from rand(), whose
 * sequence differs between C libraries: every machine writes the same bytes.
 *
 * Build and run: make translate-data (or cc -std=c11 -o translate translate.c &&
 * ./translate > translate.tsv); ./translate --dictionary prints every word's translation.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MIN_LEN 5
#define MAX_LEN 64
#define PER_LEN 400
#define MAX_WORDS 160     /* words of one side of a sentence under construction */
#define SEEN_SLOTS 65536  /* open-addressing table of sentences written (a power of 2) */
#define MAX_TRIES 1000000 /* draws for one length before giving up (never reached) */

/* The dictionary: source word, target word; plural forms beside singular ones. */
typedef struct noun {
    const char *sg, *pl, *t_sg, *t_pl;
} noun;
typedef struct adjective {
    const char *src, *t_sg, *t_pl;
} adjective;
typedef struct verb {
    const char *sg, *pl;          /* source: "sees" after a singular subject, "see" plural */
    const char *t_sg, *t_pl, *t_rel; /* target: agreeing, and the form ending a relative clause */
} verb;
typedef struct word {
    const char *src, *tgt;
} word;

static const noun nouns[] = {
    {"cat", "cats", "miko", "mikor"},          {"dog", "dogs", "vanu", "vanur"},
    {"bird", "birds", "pelo", "pelor"},        {"fox", "foxes", "resa", "resar"},
    {"horse", "horses", "tamo", "tamor"},      {"teacher", "teachers", "kolen", "kolenor"},
    {"student", "students", "sinta", "sintar"}, {"farmer", "farmers", "gardo", "gardor"},
    {"child", "children", "lupi", "lupir"},    {"king", "kings", "reno", "renor"},
    {"queen", "queens", "rena", "renar"},      {"baker", "bakers", "pano", "panor"},
    {"sailor", "sailors", "navo", "navor"},    {"painter", "painters", "tinko", "tinkor"},
    {"doctor", "doctors", "medo", "medor"},    {"river", "rivers", "flu", "fluor"},
    {"tree", "trees", "arbo", "arbor"},        {"house", "houses", "domo", "domor"},
    {"boat", "boats", "sapo", "sapor"},        {"apple", "apples", "malu", "malur"},
    {"book", "books", "libo", "libor"},        {"letter", "letters", "karta", "kartar"},
    {"garden", "gardens", "hortu", "hortur"},  {"window", "windows", "fena", "fenar"},
};
static const adjective adjectives[] = {
    {"red", "ruba", "rubai"},       {"old", "vesa", "vesai"},     {"small", "mina", "minai"},
    {"big", "gros", "grosi"},       {"quiet", "tasa", "tasai"},   {"happy", "joka", "jokai"},
    {"green", "vira", "virai"},     {"cold", "frida", "fridai"},  {"young", "nova", "novai"},
    {"brave", "kura", "kurai"},     {"tired", "laso", "lasoi"},   {"clever", "saga", "sagai"},
    {"dark", "nokta", "noktai"},    {"bright", "luma", "lumai"},  {"heavy", "pesa", "pesai"},
    {"strange", "xena", "xenai"},
};
static const verb verbs[] = {
    {"sees", "see", "vido", "vidon", "vidoki"},
    {"likes", "like", "amo", "amon", "amoki"},
    {"finds", "find", "trovo", "trovon", "trovoki"},
    {"follows", "follow", "sekvo", "sekvon", "sekvoki"},
    {"paints", "paint", "pinto", "pinton", "pintoki"},
    {"carries", "carry", "porto", "porton", "portoki"},
    {"reads", "read", "lego", "legon", "legoki"},
    {"watches", "watch", "rigo", "rigon", "rigoki"},
    {"helps", "help", "juvo", "juvon", "juvoki"},
    {"remembers", "remember", "memo", "memon", "memoki"},
    {"visits", "visit", "vizo", "vizon", "vizoki"},
    {"builds", "build", "konsto", "konston", "konstoki"},
};
static const word numbers[] = {{"two", "du"},  {"three", "tri"}, {"four", "kvar"},
                               {"five", "kin"}, {"six", "ses"},   {"seven", "sep"},
                               {"eight", "ok"}, {"nine", "nau"}};
static const word preps[] = {{"near", "apud"}, {"behind", "post"}, {"under", "sub"},
                             {"with", "kun"}};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The generator's state, and one draw in [0, n): the high bits, the best of an LCG. */
static uint64_t state = 20150101u;
static unsigned draw(unsigned n)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((state >> 33) % n);
}

/* One side of a sentence, built word by word. */
typedef struct side {
    const char *w[MAX_WORDS];
    size_t n;
} side;

static void put(side *s, const char *w)
{
    if (s->n < MAX_WORDS)
        s->w[s->n++] = w;
}

static void append(side *s, const side *t)
{
    for (size_t k = 0; k < t->n; k++)
        put(s, t->w[k]);
}

/* How rich a sentence is: its draws of adjectives, relative clauses and places. */
typedef struct style {
    unsigned max_adj;  /* adjectives per noun phrase: 0 .. max_adj */
    unsigned rel_pct;  /* chance in percent that a noun phrase has a relative clause */
    unsigned place_pct; /* chance in percent that a clause has a place */
} style;

/* A noun phrase into src and tgt; *plural says its number. A relative clause is drawn
 * only when rel (so they do not nest). */
static void noun_phrase(side *src, side *tgt, int *plural, const style *st, int rel)
{
    const noun *n = &nouns[draw(COUNT(nouns))];
    const int pl = draw(3) == 0;
    const unsigned nadj = draw(st->max_adj + 1);
    const adjective *adj[3];
    for (unsigned k = 0; k < nadj; k++) { /* distinct adjectives */
        adj[k] = &adjectives[draw(COUNT(adjectives))];
        for (unsigned j = 0; j < k; j++)
            if (adj[j] == adj[k]) {
                k--;
                break;
            }
    }
    /* the determiner: the / a (singular); the / some / a number (plural) */
    const unsigned det = draw(3);
    const word *num = pl && det == 2 ? &numbers[draw(COUNT(numbers))] : NULL;
    if (num)
        put(src, num->src);
    else
        put(src, det == 0 ? "the" : pl ? "some" : "a");
    for (unsigned k = 0; k < nadj; k++)
        put(src, adj[k]->src);
    put(src, pl ? n->pl : n->sg);

    side rsrc = {.n = 0}, rtgt = {.n = 0};
    if (rel && draw(100) < st->rel_pct) {
        const verb *v = &verbs[draw(COUNT(verbs))];
        int opl;
        put(&rsrc, "that");
        put(&rsrc, pl ? v->pl : v->sg);
        noun_phrase(&rsrc, &rtgt, &opl, st, 0);
        put(&rtgt, v->t_rel);
    }
    append(src, &rsrc);

    append(tgt, &rtgt); /* the relative clause comes before its noun */
    put(tgt, pl ? n->t_pl : n->t_sg);
    for (unsigned k = nadj; k-- > 0;)
        put(tgt, pl ? adj[k]->t_pl : adj[k]->t_sg);
    if (num)
        put(tgt, num->tgt);
    else if (det == 0)
        put(tgt, "ta");
    else if (pl)
        put(tgt, "nel");
    *plural = pl;
}

/* One clause into src and tgt. */
static void clause(side *src, side *tgt, const style *st)
{
    side ssrc = {.n = 0}, stgt = {.n = 0}, osrc = {.n = 0}, otgt = {.n = 0};
    side psrc = {.n = 0}, ptgt = {.n = 0};
    int spl, opl, ppl;
    noun_phrase(&ssrc, &stgt, &spl, st, 1);
    const verb *v = &verbs[draw(COUNT(verbs))];
    noun_phrase(&osrc, &otgt, &opl, st, 1);
    if (draw(100) < st->place_pct) {
        const word *p = &preps[draw(COUNT(preps))];
        put(&psrc, p->src);
        noun_phrase(&psrc, &ptgt, &ppl, st, 0);
        put(&ptgt, p->tgt);
    }
    append(src, &ssrc);
    put(src, spl ? v->pl : v->sg);
    append(src, &osrc);
    append(src, &psrc);

    append(tgt, &stgt);
    put(tgt, "wa");
    append(tgt, &ptgt);
    append(tgt, &otgt);
    put(tgt, spl ? v->t_pl : v->t_sg);
}

/* A sentence of about len source words: clauses joined by "and" / "ke". */
static void sentence(side *src, side *tgt, unsigned len)
{
    /* a plain clause has 5 words; a rich one 15 to 25: draw a richness, then clauses */
    style st = {draw(4), 20 + draw(60), 20 + draw(60)};
    unsigned per = 5 + st.max_adj * 3 + st.rel_pct / 8 + st.place_pct / 25;
    unsigned nc = len / per;
    nc = nc < 1 ? 1 : nc + draw(2);
    src->n = tgt->n = 0;
    for (unsigned c = 0; c < nc; c++) {
        if (c > 0) {
            put(src, "and");
            put(tgt, "ke");
        }
        clause(src, tgt, &st);
    }
}

/* FNV-1a of a side's words, one space apart. */
static uint64_t fingerprint(const side *s)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < s->n; k++) {
        for (const char *p = s->w[k]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ ' ') * 1099511628211ull;
    }
    return h ? h : 1;
}

/* The sentences written, by fingerprint (0: empty slot). */
static uint64_t seen[SEEN_SLOTS];

/* Marks s as written; returns 0 when it was new, 1 when it had been written before. */
static int written_before(const side *s)
{
    const uint64_t h = fingerprint(s);
    for (size_t at = (size_t)h & (SEEN_SLOTS - 1);; at = (at + 1) & (SEEN_SLOTS - 1)) {
        if (seen[at] == h)
            return 1;
        if (seen[at] == 0) {
            seen[at] = h;
            return 0;
        }
    }
}

static void print_side(const side *s)
{
    for (size_t k = 0; k < s->n; k++)
        printf(k ? " %s" : "%s", s->w[k]);
}

/* Prints the dictionary, one entry a line, CLASS<TAB>SOURCE FORMS<TAB>TARGET FORMS:
 *     noun  SG PL  T_SG T_PL        adj  SRC  T_SG T_PL       verb  SG PL  T_SG T_PL T_REL
 *     number SRC  TGT               prep SRC  TGT
 * then the grammar's own words: determiners, "that", "and" and the subject marker, with
 * "-" where a word has no translation. */
static void print_dictionary(void)
{
    for (size_t k = 0; k < COUNT(nouns); k++)
        printf("noun\t%s %s\t%s %s\n", nouns[k].sg, nouns[k].pl, nouns[k].t_sg, nouns[k].t_pl);
    for (size_t k = 0; k < COUNT(adjectives); k++)
        printf("adj\t%s\t%s %s\n", adjectives[k].src, adjectives[k].t_sg, adjectives[k].t_pl);
    for (size_t k = 0; k < COUNT(verbs); k++)
        printf("verb\t%s %s\t%s %s %s\n", verbs[k].sg, verbs[k].pl, verbs[k].t_sg, verbs[k].t_pl,
               verbs[k].t_rel);
    for (size_t k = 0; k < COUNT(numbers); k++)
        printf("number\t%s\t%s\n", numbers[k].src, numbers[k].tgt);
    for (size_t k = 0; k < COUNT(preps); k++)
        printf("prep\t%s\t%s\n", preps[k].src, preps[k].tgt);
    printf("det\tthe\tta\ndet\ta\t-\ndet\tsome\tnel\nrel\tthat\t-\nand\tand\tke\n"
           "subject\t-\twa\n");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--dictionary") == 0) {
        print_dictionary();
        return ferror(stdout) ? 1 : 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: translate [--dictionary] (writes the data set, or its "
                        "dictionary, to standard output)\n");
        return 2;
    }
    printf("# translate.tsv: %d sentences of %d to %d words in a toy source language -> "
           "their translations\n# into a toy target language (verb last, relative clauses "
           "and adjectives moved, agreement).\n# Written by docs/labs/data/translate.c "
           "(make translate-data).\n",
           PER_LEN * (MAX_LEN - MIN_LEN + 1), MIN_LEN, MAX_LEN);
    static side src, tgt;
    for (unsigned len = MIN_LEN; len <= MAX_LEN; len++) {
        unsigned found = 0;
        for (long tries = 0; found < PER_LEN; tries++) {
            if (tries == MAX_TRIES) {
                fprintf(stderr, "translate: only %u sentences of %u words found\n", found, len);
                return 1;
            }
            sentence(&src, &tgt, len);
            if (src.n != len || written_before(&src))
                continue;
            print_side(&src);
            putchar('\t');
            print_side(&tgt);
            putchar('\n');
            found++;
        }
    }
    return ferror(stdout) ? 1 : 0;
}
