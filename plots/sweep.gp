# sweep.gp — the learning-rate sweep: how fast each model learns at each rate, and how
# far it gets.
#
# What it shows. Two panels, the learning rate across (log scale), one line per model.
# Left: the steps to 0.99 validation token accuracy (log scale; median over seeds, bar:
# fastest to slowest seed); a filled point when the median run got there, an open one
# when it did not (the point is then its last validation: more than that). Right: the
# best validation token accuracy of the runs (median, bar: min-max), the dashed line at
# 0.99.
#
# Reads. DIR/figure_vars.gp (task, seeds)
#        DIR/sweep.tsv, one row per model and rate:
#          model base lr seeds reached steps_median steps_min steps_max
#          best_median best_min best_max
#        (a steps cell "> N" is a bound: that run never reached 0.99)
# Writes. DIR/figures/sweep.png and DIR/figures/sweep.svg (into FIGS/ instead when
#         figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/lrsweep'" plots/sweep.gp
#
# What to look for. Each model's best rate is the lowest point of its left line among the
# filled ones; a model is fairly compared only at its own best rate. A rate too high for
# a model shows as an open point on the left and a lower best on the right.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/lrsweep'\" plots/sweep.gp"
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
data = dir."/sweep.tsv"
out  = figs."/sweep"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# The models of the sweep, in the order sweep.tsv lists them (its "base" column), each in
# its own colour (Okabe–Ito: the same as in every figure).
bases = ""
stats data using (b = strcol("base"), b ne "base" && strstrt(bases." ", " ".b." ") == 0 ? \
                  (bases = bases." ".b, 0) : 0) nooutput
if (words(bases) == 0) {
    print "sweep.gp: no model was trained at more than one rate (attnlab compare --preset lrsweep): skipping sweep"
    exit
}
stats data using "lr" nooutput
lr_lo = STATS_min / 1.6
lr_hi = STATS_max * 1.6
n_bases = words(bases)
base(i) = word(bases, i)
own_colour(b) = b eq "lstm" ? "#D55E00" : b eq "rnn_attention" ? "#0072B2" : \
                b eq "transformer" ? "#009E73" : "#CC79A7"
# A cell "> N" is a bound N; plain numbers as they are.
num(s) = strstrt(s, ">") > 0 ? real(s[strstrt(s, ">") + 1:]) : real(s)
bound(s) = strstrt(s, ">") > 0
of(i, col) = strcol("base") eq base(i) ? num(strcol(col)) : NaN
reached(i) = strcol("base") eq base(i) && !bound(strcol("steps_median")) ? \
             num(strcol("steps_median")) : NaN
short(i) = strcol("base") eq base(i) && bound(strcol("steps_median")) ? \
           num(strcol("steps_median")) : NaN
best(i, col) = strcol("base") eq base(i) ? column(col) : NaN
if (!exists("seeds")) { seeds = 1 }

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1200, 560 font face.",12" enhanced
    } else {
        set terminal svg size 1200, 560 dynamic enhanced font face.",12" \
            name "sweep" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 1, 2 margins 0.08, 0.98, 0.22, 0.86 spacing 0.09 \
        title sprintf(tr("sweep_title", "Task %s: the learning-rate sweep (median over up to %d " . \
                      "seed(s), bar = min-max)"), task, seeds) font ",14" noenhanced
    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x
    set xrange [lr_lo:lr_hi]
    set xlabel tr("sweep_x", "learning rate (log scale)")
    set format x "%g"
    unset key

    set title tr("sweep_steps_title", "steps to 0.99 validation token accuracy (open: not reached; more)")
    set logscale y
    set ylabel tr("sweep_steps_y", "steps (log scale)")
    plot for [i = 1:n_bases] data using "lr":(of(i, "steps_median")):(of(i, "steps_min")): \
             (of(i, "steps_max")) with yerrorbars lw 1.5 pt 0 lc rgb own_colour(base(i)) \
             notitle, \
         for [i = 1:n_bases] data using "lr":(of(i, "steps_median")) \
             with lines lw 2 lc rgb own_colour(base(i)) notitle, \
         for [i = 1:n_bases] data using "lr":(reached(i)) \
             with points pt 7 ps 1.3 lc rgb own_colour(base(i)) notitle, \
         for [i = 1:n_bases] data using "lr":(short(i)) \
             with points pt 6 ps 1.5 lw 2 lc rgb own_colour(base(i)) notitle

    set title tr("sweep_best_title", "best validation token accuracy")
    unset logscale y
    set ylabel tr("sweep_best_y", "accuracy (0-1)")
    set yrange [*:1.005]
    plot for [i = 1:n_bases] data using "lr":(best(i, "best_median")):(best(i, "best_min")): \
             (best(i, "best_max")) with yerrorlines lw 2 pt 7 ps 1 \
             lc rgb own_colour(base(i)) notitle, \
         0.99 with lines dt 2 lw 1.5 lc rgb "#444444" notitle
    set autoscale y

    # ---- one legend for both panels, in a row under them ------------------------------
    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset logscale x
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.08
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_bases] NaN with linespoints lw 2 pt 7 lc rgb own_colour(base(i)) \
             title base(i), \
         NaN with points pt 6 ps 1.5 lw 2 lc rgb "#444444" title tr("sweep_short", "median run short of 0.99")
    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    set autoscale x; set autoscale y
    set xtics; set ytics; set ztics; set cbtics
}
print "sweep.gp: wrote ".out." (".formats.")"
