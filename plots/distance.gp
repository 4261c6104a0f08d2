# distance.gp — distance or amount: accuracy at each output position against its gap.
#
# What it shows. One panel per model. Each point is one output position of one length
# inside the training range: across, its gap (the steps of the encoder-decoder between
# reading the source symbol the position repeats and writing it); up, its accuracy
# (greedy decoding, mean over seeds); its colour, the length of the sequence. The
# dashed line is chance (1/symbols).
#
# Reads. DIR/figure_vars.gp (train_min, train_max, chance, symbols, task, models, seeds)
#        DIR/distance.tsv, one row per model, length and position (1-based):
#          model len position gap seeds acc_mean acc_min acc_max
# Writes. DIR/figures/distance.png and DIR/figures/distance.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/distance'" plots/distance.gp
#
# What to look for. In copy every position of a length L has gap L: each length is a
# column of points, and distance and the amount to store (L symbols) grow together. In
# reverse (compare --preset distance) output j repeats source symbol L-1-j, read 2j+1
# steps earlier: within one length the amount stored is fixed and the gap runs from 1
# to 2L-1. If a model's accuracy is set by distance, the colours lie on one falling
# curve; if by the amount stored, they separate: at an equal gap, longer sequences
# (warmer colours) are worse. Attention reads any source position in one step, so its
# points stay near 1 at every gap.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/distance.gp"
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
data = dir."/distance.tsv"
out  = figs."/distance"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# Nothing to draw for a task read from a file: distance.tsv then holds its header alone.
stats data using "gap" nooutput
if (!exists("STATS_records") || STATS_records == 0) {
    print "distance.gp: no output position repeats a source symbol (a task read from a file): skipping distance"
    exit
}

# Legends and titles write a group as the command line says it ("rnn_attention --cell
# lstm" for "rnn_attention:cell=lstm").
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
pretty(m) = strstrt(m, ":") == 0 ? m : base_of(m)." ".flags(m[strstrt(m, ":") + 1:])
n_models = words(models)
model(i) = word(models, i)
# Rows of model i at a trained length; every other row gives NaN (no point).
trained(L) = L >= train_min && L <= train_max
of(i, col) = strcol("model") eq model(i) && trained(column("len")) ? column(col) : NaN

if (!exists("seeds")) {
    stats data using "seeds" nooutput
    seeds = int(STATS_max)
}
# The widest gap the trained lengths can have: 2 * train_max - 1 (reverse), train_max
# (copy); the axis ends past it.
gap_max = 2 * train_max
columns = n_models < 3 ? n_models : 3
rows = int((n_models + columns - 1) / columns)
width = 160 + 460 * columns
height = 120 + 420 * rows

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size width, height font face.",12" enhanced
    } else {
        set terminal svg size width, height dynamic enhanced font face.",12" \
            name "distance" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout rows, columns margins 0.07, 0.90, 0.12, 0.88 spacing 0.06, 0.12 \
        title sprintf(tr("dist_title", "Task %s: accuracy at each output position against its gap " . \
                      "(trained lengths %d-%d; mean over %d seed(s); colour = length)"), \
                      task, train_min, train_max, seeds) font ",14" noenhanced

    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set xlabel tr("dist_x", "gap: steps from reading the symbol to writing it")
    set xrange [0:gap_max]
    set yrange [0:1.05]
    set ytics 0, 0.2, 1
    set cbrange [train_min:train_max]
    set cblabel tr("dist_cb", "sequence length L")
    set palette defined (0 "#0072B2", 0.5 "#009E73", 1 "#D55E00")
    unset key

    do for [i = 1:n_models] {
        set title pretty(model(i)) noenhanced
        if ((i - 1) % columns == 0) { set ylabel tr("dist_y", "accuracy at that position (0-1)") } \
        else { unset ylabel }
        # the colour box once, beside the last panel of the first row
        if (i == columns || i == n_models && n_models < columns) { set colorbox } \
        else { unset colorbox }
        plot data using (of(i, "gap")):(of(i, "acc_mean")):(of(i, "len")) \
                 with points pt 7 ps 0.55 lc palette notitle, \
             chance with lines dt 2 lw 1.5 lc rgb "#444444" notitle
    }

    unset multiplot
    set output
    # the tics back on as the pass found them: `set tics` turns on an axis whose tics
    # `unset tics` turned off, mirrored, so the next format would differ from this one
    set xtics; set ytics; set ztics; set cbtics
}
print "distance.gp: wrote ".out." (".formats.")"
