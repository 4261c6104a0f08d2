# bleu.gp — translation quality against sentence length (the shape of Bahdanau et al.
# 2015, Fig. 2).
#
# What it shows. For the runs of a file task (your own SOURCE<TAB>TARGET pairs, or the
# toy translation of `make translate-data`), the corpus BLEU-4 of the test set's
# sentences in bins of 5 source lengths, one line per group of runs: the mean over
# seeds, with a band from the worst seed to the best. The grey bands are the training
# ranges (darker where two overlap); the key gives each group's BLEU over every length
# ("all"). Groups are named as the paper names them where their model says
# (RNNencdec-30, RNNsearch-50: the model and its longest training length); the groups of
# one setup trained on different lengths share a colour, the longest-trained solid, the
# others dashed, as in Bahdanau et al.'s Fig. 2. A group with runs the step cap stopped
# before their target (censored: cut short, not converged) is drawn with open points
# and its key says how many.
#
# Reads. DIR/figure_vars.gp (train_min, train_max, task, models, seeds; labels,
#          trained_to, kin and capped per group when the report wrote them)
#        DIR/bleu.tsv, one row per group and bin of source lengths:
#          model len_min len_max seeds sentences bleu_mean bleu_min bleu_max
#        (len_min = len_max = "all": every length pooled)
# Writes. DIR/figures/bleu.png and DIR/figures/bleu.svg (into FIGS/ instead when
#         figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/translate'" plots/bleu.gp
#
# What to look for. Bahdanau et al. found that the encoder-decoder without attention
# (RNNencdec) falls as sentences grow longer, sharply past the lengths it was trained
# on, while the one with attention (RNNsearch) holds up, and that training on longer
# sentences (50 rather than 30 words) helps both. The question here is whether the same
# shape appears on the toy translation: the LSTM's line falling with length, the
# attention model's staying high, inside the training range and past it.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/translate'\" plots/bleu.gp"
    exit status 2
}
load dir."/figure_vars.gp"
if (!exists("figs")) { figs = dir."/figures" }
# The formats to draw, each a file: PNG and SVG (attnlab report), or what formats= names
# ("svg" in the page in the browser).
if (!exists("formats")) { formats = "png svg" }
# The words of the figure: tr(KEY, ENGLISH) is the English, unless figure_vars.gp gives
# the label in Chinese as zh_KEY (attnlab report --lang zh, where a Chinese font is
# installed); label_font then names that font.
tr(key, en) = exists("zh_".key) ? value("zh_".key) : en
face = exists("label_font") ? label_font : "sans"
data = dir."/bleu.tsv"
out  = figs."/bleu"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# Nothing to draw for a generated task: bleu.tsv then holds its header alone.
stats data using "seeds" nooutput
if (!exists("STATS_records") || STATS_records == 0) {
    print "bleu.gp: no run has BLEU counts (a task read from a file writes them): skipping bleu"
    exit
}

# One colour per group, the same in every figure (Okabe–Ito): a model's own colour for
# its first group, the spare colours for its other setups; legends write a group as the
# command line says it ("rnn_attention --bidirectional 1").
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
pretty(m) = strstrt(m, ":") == 0 ? m : base_of(m)." ".flags(m[strstrt(m, ":") + 1:])
own_colour(b) = b eq "lstm" ? "#D55E00" : b eq "rnn_attention" ? "#0072B2" : \
                b eq "transformer" ? "#009E73" : ""
spare = "#CC79A7 #E69F00 #56B4E9 #000000 #999999"
n_models = words(models)
model(i) = word(models, i)
# Per group: its name in the key, its longest training length, the first group of its
# setup (kin) and its runs the cap stopped; older figure_vars.gp files have none of them.
has_labels = exists("labels") && exists("kin") && exists("trained_to") && exists("capped")
name(i) = has_labels ? word(labels, i) : pretty(model(i))
kin_of(i) = has_labels ? int(word(kin, i)) : i
to_of(i) = has_labels ? int(word(trained_to, i)) : train_max
capped_of(i) = has_labels ? int(word(capped, i)) : 0
array hue[n_models]
array dash[n_models]
spares = 0
do for [i = 1:n_models] {
    # the longest-trained group of a setup is solid, its shorter-trained kin dashed
    dash[i] = 1
    do for [j = 1:n_models] { if (kin_of(j) == kin_of(i) && to_of(j) > to_of(i)) { dash[i] = 2 } }
    if (kin_of(i) < i) {
        hue[i] = hue[kin_of(i)]
        continue
    }
    first = 1
    do for [j = 1:i - 1] { if (base_of(model(j)) eq base_of(model(i))) { first = 0 } }
    if (first && own_colour(base_of(model(i))) ne "") {
        hue[i] = own_colour(base_of(model(i)))
    } else {
        spares = spares + 1
        hue[i] = word(spare, (spares - 1) % words(spare) + 1)
    }
}
# Rows of group i's bins (the middle of the bin across); the pooled row and every other
# group's give NaN (no point).
binned(i, col) = strcol("model") eq model(i) && strcol("len_min") ne "all" ? column(col) : NaN
middle(i) = binned(i, "len_min") + (column("len_max") - column("len_min")) / 2.0
# Group i's BLEU over every length and its runs, for the key (NaN when bleu.tsv has no
# such row).
array overall[n_models]
array runs_of[n_models]
any_capped = 0
do for [i = 1:n_models] {
    overall[i] = NaN
    runs_of[i] = 0
    stats data using (strcol("model") eq model(i) && strcol("len_min") eq "all" ? \
                      column("bleu_mean") : NaN) nooutput
    if (STATS_records > 0) { overall[i] = STATS_max }
    stats data using (strcol("model") eq model(i) && strcol("len_min") eq "all" ? \
                      column("seeds") : NaN) nooutput
    if (STATS_records > 0) { runs_of[i] = int(STATS_max) }
    if (capped_of(i) > 0 && STATS_records > 0) { any_capped = 1 }
}
key_of(i) = capped_of(i) > 0 ? \
    sprintf(tr("bleu_key_capped", "%s (all: %.1f; %d of %d runs stopped by the cap)"), \
            name(i), 100 * overall[i], capped_of(i), runs_of[i]) : \
    sprintf(tr("bleu_key", "%s (all: %.1f)"), name(i), 100 * overall[i])
# filled points; open ones for a group the cap cut short
point(i) = capped_of(i) > 0 ? 6 : 7
stats data using (strcol("len_min") ne "all" ? column("len_max") : NaN) nooutput
len_top = STATS_max
if (!exists("seeds")) { seeds = 1 }

band = "fs transparent solid 0.22 noborder"
mean = "linespoints lw 2 ps 0.8"

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 900, 560 font face.",12" enhanced
    } else {
        set terminal svg size 900, 560 dynamic enhanced font face.",12" \
            name "bleu" background rgb "white"
    }
    set output out.".".fmt
    set title sprintf(tr("bleu_title", "Task %s: BLEU-4 of the test set against source length\n" . \
                      "(bins of 5 lengths; mean over %d seed(s), band = min-max)"), task, \
                      seeds) noenhanced
    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set xlabel tr("bleu_x", "source length (words)")
    set ylabel tr("bleu_y", "BLEU-4 (0-100)")
    set xrange [0:len_top + 2]
    set yrange [0:105]
    set key below horizontal maxrows 2 noenhanced
    # the training ranges, each once: shorter ones show darker where they overlap
    do for [i = 1:n_models] {
        seen = 0
        do for [j = 1:i - 1] { if (to_of(j) == to_of(i)) { seen = 1 } }
        if (!seen) {
            set object i rect from train_min - 0.5, graph 0 to to_of(i) + 0.5, graph 1 \
                behind fc rgb "#D8D8D8" fs transparent solid 0.45 noborder
        }
    }
    if (any_capped) {
        set label 1 tr("bleu_open", "open points: runs stopped by the step cap (censored)") \
            at graph 0.98, graph 0.96 right font face.",10" noenhanced
    }
    plot for [i = 1:n_models] data using (middle(i)):(100 * column("bleu_min")): \
             (100 * column("bleu_max")) with filledcurves @band lc rgb hue[i] notitle, \
         for [i = 1:n_models] data using (middle(i)):(100 * column("bleu_mean")) \
             with @mean lc rgb hue[i] dt dash[i] pt point(i) title key_of(i)
    unset object
    unset label 1
    set output
}
print "bleu.gp: wrote ".out." (".formats.")"
