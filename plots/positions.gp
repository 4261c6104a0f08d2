# positions.gp — where in the sequence each model fails: accuracy per output position.
#
# What it shows. One panel per sequence length in position_lengths (e.g. 8, 32, 64).
# In each, the accuracy of output position 1, 2, ..., L (greedy decoding), one line per
# model: the mean over seeds, with a band from the worst to the best seed. In a panel
# longer than the trained lengths, the positions no training sequence ever had are
# shaded. The dashed line is chance (1/symbols).
#
# Reads. DIR/figure_vars.gp (train_min, train_max, chance, symbols, task, models,
#        position_lengths, seeds)
#        DIR/positions.tsv, one row per model, length and position (1-based):
#          model len position seeds acc_mean acc_min acc_max
# Writes. DIR/figures/positions.png and DIR/figures/positions.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/positions.gp
#
# What to look for. The LSTM is right at the first positions and then falls along the
# sequence: its decoder unrolls one state that holds the whole source, and each wrong
# token it feeds back makes the next one likelier to be wrong. The attention models are
# flat near 1 wherever they were trained. At a length beyond training, look at the
# shaded positions: a model whose positions are absolute (the Transformer's sinusoidal
# encodings) meets position numbers it never saw and drops there, often to chance.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/positions.gp"
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
data = dir."/positions.tsv"
out  = figs."/positions"

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
# Rows of model i at length L; every other row gives NaN (no point).
of(i, L, col) = strcol("model") eq model(i) && column("len") == L ? column(col) : NaN

if (!exists("seeds")) {
    stats data using "seeds" nooutput
    seeds = int(STATS_max)
}
n_panels = words(position_lengths)
where(L) = L > train_max ? tr("longer", "longer than any trained") : \
           L < train_min ? tr("shorter", "shorter than any trained") : \
           tr("inside", "inside the trained lengths")

band = "fs transparent solid 0.22 noborder"
mean = "linespoints lw 2 pt 7 ps 0.5"
width = 200 + 440 * n_panels

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size width, 660 font face.",12" enhanced
    } else {
        set terminal svg size width, 660 dynamic enhanced font face.",12" \
            name "positions" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 1, n_panels margins 0.07, 0.98, 0.22, 0.86 spacing 0.05 \
        title sprintf(tr("pos_title", "Task %s: accuracy at each output position " . \
                      "(greedy decoding; line = mean over %d seed(s), band = min–max)"), \
                      task, seeds) font ",14" noenhanced

    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set xlabel tr("pos_x", "output position (1 = first token written)")
    set yrange [0:1.16]
    set ytics 0, 0.2, 1
    unset key

    do for [p = 1:n_panels] {
        L = int(word(position_lengths, p))
        set title sprintf(tr("pos_panel", "L = %d (%s)"), L, where(L))
        set xrange [0.5:L + 0.5]
        if (p == 1) { set ylabel tr("at_position_y", "accuracy at that position (0–1)") } \
        else { unset ylabel }
        # Positions past the longest trained length: no training sequence had them.
        if (L > train_max) {
            set object 1 rect from train_max + 0.5, graph 0 to L + 0.5, graph 1 behind \
                fc rgb "#EEEEEE" fs solid 1.0 noborder
            set label 1 sprintf(tr("pos_never", "positions > %d:\nnever trained"), train_max) \
                at (train_max + L + 1) / 2.0, graph 0.93 center tc rgb "#555555"
        } else {
            unset object 1
            unset label 1
        }
        plot for [i = 1:n_models] data \
                 using "position":(of(i, L, "acc_min")):(of(i, L, "acc_max")) \
                 with filledcurves @band lc rgb hue[i] notitle, \
             for [i = 1:n_models] data using "position":(of(i, L, "acc_mean")) \
                 with @mean lc rgb hue[i] notitle, \
             chance with lines dt 2 lw 1.5 lc rgb "#444444" notitle
    }

    # ---- one legend for every panel, in a row under them -------------------------------
    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset object 1; unset label 1
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.08
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_models] NaN with @mean lc rgb hue[i] title pretty(model(i)), \
         NaN with lines dt 2 lw 1.5 lc rgb "#444444" title sprintf(tr("chance", "chance = 1/%d"), symbols)

    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    # and the tics back on as the pass found them: `set tics` turns on an axis whose tics
    # `unset tics` turned off, mirrored, so the next format would differ from this one
    set xtics; set ytics; set ztics; set cbtics
}
print "positions.gp: wrote ".out." (".formats.")"
