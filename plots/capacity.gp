# capacity.gp — does a larger state help the LSTM? How far each setup copies, against
# its size.
#
# What it shows. One point per setup (a model at one size): how far it copies — its
# reach, the longest evaluated length up to which every length from the shortest
# training length on is copied with at least 99% token accuracy (greedy decoding) —
# against its number of parameters (log scale).
# Point: the median over seeds; bar: the lowest to the highest seed. The setups of one
# model (a sweep, e.g. the LSTM at hidden 64 to 512) are joined by a line. The dashed
# line is the longest training length: a reach there means the whole training range is
# copied; above it, the model also copies lengths it never trained on.
#
# Reads. DIR/figure_vars.gp (train_min, train_max, task, seeds)
#        DIR/capacity.tsv, one row per setup:
#          model base setups params seeds reach_median reach_min reach_max
#          tok_train_max_mean tok_train_max_min tok_train_max_max
# Writes. DIR/figures/capacity.png and DIR/figures/capacity.svg (into FIGS/ instead when
#         figs='FIGS' is given); nothing when no model has more than one setup (no sweep:
#         attnlab compare --preset capacity makes one).
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/capacity'" plots/capacity.gp
#
# What to look for. If a larger state only delays the decay, the LSTM's reach grows with
# its width but stays below the attention models' at comparable sizes; if width alone
# closed the gap, the LSTM line would reach the attention models' points.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/capacity'\" plots/capacity.gp"
    exit status 2
}
load dir."/figure_vars.gp"
# The task's name comes from a file name (task file:PATH), so attnlab writes it in
# figure_vars.gp as a single-quoted string, never code; titles that show it are drawn
# without enhanced text.
if (!exists("figs")) { figs = dir."/figures" }
# The formats to draw, each a file: PNG and SVG (attnlab report), or what formats= names
# ("svg" in the page in the browser).
if (!exists("formats")) { formats = "png svg" }
# The words of the figure: tr(KEY, ENGLISH) is the English, unless figure_vars.gp gives
# the label in Chinese as zh_KEY (attnlab report --lang zh, where a Chinese font is
# installed); label_font then names that font.
tr(key, en) = exists("zh_".key) ? value("zh_".key) : en
face = exists("label_font") ? label_font : "sans"
data = dir."/capacity.tsv"
out  = figs."/capacity"

set encoding utf8
set print "-"
set datafile separator "\t"

stats data using "setups" nooutput
if (!exists("STATS_records") || STATS_records == 0 || STATS_max < 2) {
    print "capacity.gp: no model was trained at more than one size (attnlab compare --preset capacity): skipping capacity"
    exit
}
stats data using "reach_max" nooutput
top = STATS_max > train_max ? STATS_max : train_max

colour(m) = m eq "lstm" ? "#D55E00" : m eq "rnn_attention" ? "#0072B2" : \
            m eq "transformer" ? "#009E73" : "#CC79A7"
bases = "lstm rnn_attention transformer"
# A setup is named after its model plus the setting that tells it apart
# ("lstm:hidden=64"); labels write it as the command line says it ("lstm --hidden 64").
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
pretty(m) = strstrt(m, ":") == 0 ? m : base_of(m)." ".flags(m[strstrt(m, ":") + 1:])
of(b, col) = strcol("base") eq b ? column(col) : NaN

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1000, 700 font face.",12" enhanced
    } else {
        set terminal svg size 1000, 700 dynamic enhanced font face.",12" \
            name "capacity" background rgb "white"
    }
    set output out.".".fmt
    set title sprintf(tr("cap_title", "Task %s, trained on lengths %d–%d: reach against size " . \
                      "(median over %d seed(s), bar = min–max)"), task, train_min, \
                      train_max, seeds) font ",13" noenhanced
    set border 3
    set tics nomirror out
    set grid xtics ytics mxtics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x
    set format x "%.0s%c"
    set xlabel tr("cap_x", "parameters (log scale)")
    set ylabel tr("cap_y", "reach: every length up to it at ≥ 99% token accuracy")
    set yrange [0:top * 1.15]
    set offsets graph 0.08, graph 0.12, 0, 0
    set key top left noenhanced
    set label 1 sprintf(tr("cap_longest", "longest training length (%d)"), train_max) \
        at graph 0.98, first train_max offset 0, 0.7 right tc rgb "#444444"
    plot for [b in bases] data using "params":(of(b, "reach_median")) \
             with lines lw 1.5 lc rgb colour(b) notitle, \
         for [b in bases] data using "params":(of(b, "reach_median")): \
             (of(b, "reach_min")):(of(b, "reach_max")) \
             with yerrorbars pt 7 ps 1.3 lc rgb colour(b) title b, \
         data using "params":"reach_median":(pretty(stringcolumn("model"))) \
             with labels offset 0, -1.2 font ",10" tc rgb "#444444" noenhanced notitle, \
         train_max with lines dt 2 lw 1.5 lc rgb "#444444" notitle
    unset label 1
    set output
}
print "capacity.gp: wrote ".out." (".formats.")"
