# accuracy.gp — accuracy against sequence length: the central figure of attnlab.
#
# What it shows. Two panels, one line per model. Left: token accuracy (the fraction of
# output tokens that are right) against the sequence length L. Right: whole-sequence
# accuracy (the fraction of sequences with every token right). The line is the mean over
# the training seeds; the coloured band around it spans the worst and the best seed.
# The grey band marks the lengths the models were trained on; the dashed line is chance
# (a uniform guess among the data symbols, 1/symbols).
#
# Reads. DIR/figure_vars.gp (train_min, train_max, chance, symbols, task, models, seeds)
#        DIR/accuracy.tsv, one row per model and length, statistics over seeds:
#          model params len seeds token_mean token_sd token_min token_max
#          seq_mean seq_sd seq_min seq_max
# Writes. DIR/figures/accuracy.png and DIR/figures/accuracy.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/accuracy.gp
#
# What to look for. In the copy task the length is also the distance between reading a
# token and writing it back. The LSTM has to carry the whole sequence in one fixed-size
# state, so its accuracy falls as L grows, often already inside the trained lengths.
# The attention models look back at every input directly and stay near 1 across the
# grey band; to its right they meet lengths they never trained on, and the question
# becomes whether they generalise. Whole-sequence accuracy is much harsher (one wrong
# token spoils a sequence), so it falls earlier and faster than token accuracy.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/accuracy.gp"
    exit status 2
}
load dir."/figure_vars.gp"
# The task's name comes from a file name (task file:PATH), so attnlab writes it in
# figure_vars.gp as a single-quoted string, never code; titles that show it are drawn
# without enhanced text.
# The figures go to DIR/figures, or to the folder figs names (attnlab report passes a
# temporary one and moves each figure into DIR/figures once it is complete); it must
# exist (attnlab makes it).
if (!exists("figs")) { figs = dir."/figures" }
# The formats to draw, each a file: PNG and SVG (attnlab report), or what formats= names
# ("svg" in the page in the browser).
if (!exists("formats")) { formats = "png svg" }
# The words of the figure: tr(KEY, ENGLISH) is the English, unless figure_vars.gp gives
# the label in Chinese as zh_KEY (attnlab report --lang zh, where a Chinese font is
# installed); label_font then names that font.
tr(key, en) = exists("zh_".key) ? value("zh_".key) : en
face = exists("label_font") ? label_font : "sans"
data = dir."/accuracy.tsv"
out  = figs."/accuracy"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# One colour per group, the same in every figure (Okabe–Ito, safe for colour blindness):
# a model's own colour for its first group, the spare colours for its variants. A group
# is named after its model plus the settings that tell its setups apart
# ("rnn_attention:cell=lstm"); legends write it as the command line says it
# ("rnn_attention --cell lstm").
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
array hue[n_models]
spares = 0
do for [i = 1:n_models] {
    first = 1
    do for [j = 1:i - 1] { if (base_of(model(j)) eq base_of(model(i))) { first = 0 } }
    if (first && own_colour(base_of(model(i))) ne "") {
        hue[i] = own_colour(base_of(model(i)))
    } else {
        spares = spares + 1
        hue[i] = word(spare, (spares - 1) % words(spare) + 1)
    }
}
# A row belongs to model i when its first column names it; other rows give NaN (no point).
of(i, col) = strcol("model") eq model(i) ? column(col) : NaN

# The parameter count of each model, for the legend ("lstm (167k params)").
array params[n_models]
do for [i = 1:n_models] {
    params[i] = 0
    stats data using (strcol("model") eq model(i) ? (params[i] = column("params")) : 0, 0) nooutput
}
label(i) = params[i] > 0 ? sprintf(tr("params", "%s (%.0fk params)"), pretty(model(i)), params[i] / 1000.0) : \
           pretty(model(i))

# The longest length evaluated: past the trained ones, its side of the band is labelled.
stats data using "len" nooutput
len_max = STATS_max

# The number of seeds behind each band: from figure_vars.gp, else the largest in the file.
if (!exists("seeds")) {
    stats data using "seeds" nooutput
    seeds = int(STATS_max)
}

band = "fs transparent solid 0.22 noborder"
mean = "linespoints lw 2 pt 7 ps 0.6"

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1400, 720 font face.",12" enhanced
    } else {
        set terminal svg size 1400, 720 dynamic enhanced font face.",12" \
            name "accuracy" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 1, 2 margins 0.06, 0.98, 0.2, 0.88 spacing 0.07 \
        title sprintf(tr("acc_title", "Task %s: accuracy against sequence length " . \
                      "(greedy decoding; line = mean over %d seed(s), band = min–max)"), \
                      task, seeds) font ",14" noenhanced

    # ---- the look both panels share ---------------------------------------------------
    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set xlabel tr("acc_x", "sequence length L (tokens)")
    set xrange [0:*]
    set autoscale xfixmax
    set yrange [0:1.12]
    set ytics 0, 0.2, 1
    unset key
    # The trained lengths: a grey band behind the data, labelled at its top.
    set object 1 rect from train_min, graph 0 to train_max, graph 1 behind \
        fc rgb "#EEEEEE" fs solid 1.0 noborder
    set label 1 sprintf(tr("trained_on", "trained on L = %d–%d"), train_min, train_max) \
        at (train_min + train_max) / 2.0, graph 0.96 center tc rgb "#555555"
    if (len_max > train_max) {
        set label 2 tr("beyond", "beyond: never trained") at train_max, graph 0.96 offset 1, 0 \
            left tc rgb "#555555"
    }

    # ---- left: token accuracy ---------------------------------------------------------
    set title tr("acc_token_title", "Token accuracy: fraction of output tokens correct")
    set ylabel tr("acc_token_y", "token accuracy (0–1)")
    plot for [i = 1:n_models] data using "len":(of(i, "token_min")):(of(i, "token_max")) \
             with filledcurves @band lc rgb hue[i] notitle, \
         for [i = 1:n_models] data using "len":(of(i, "token_mean")) \
             with @mean lc rgb hue[i] notitle, \
         chance with lines dt 2 lw 1.5 lc rgb "#444444" notitle

    # ---- right: whole-sequence accuracy -------------------------------------------------
    set title tr("acc_seq_title", "Sequence accuracy: fraction of sequences entirely correct")
    set ylabel tr("acc_seq_y", "sequence accuracy (0–1)")
    plot for [i = 1:n_models] data using "len":(of(i, "seq_min")):(of(i, "seq_max")) \
             with filledcurves @band lc rgb hue[i] notitle, \
         for [i = 1:n_models] data using "len":(of(i, "seq_mean")) \
             with @mean lc rgb hue[i] notitle

    # ---- one legend for both panels, in a row under them ------------------------------
    # An empty plot across the bottom strip of the page that draws only its key.
    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset object 1; unset label 1; unset label 2
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.08
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_models] NaN with @mean lc rgb hue[i] title label(i), \
         NaN with lines dt 2 lw 1.5 lc rgb "#444444" title sprintf(tr("chance", "chance = 1/%d"), symbols)

    unset multiplot
    set output
    # back to automatic margins for the next format
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    # and the tics back on as the pass found them: `set tics` turns on an axis whose tics
    # `unset tics` turned off, mirrored, so the next format would differ from this one
    set xtics; set ytics; set ztics; set cbtics
}
print "accuracy.gp: wrote ".out." (".formats.")"
