# cost.gp — what each model costs as sequences grow: measured time and counted FLOPs.
#
# What it shows. Two panels on log-log axes, one line per model, against the sequence
# length L. Left: the measured time of one training step (forward and backward) per
# sequence, in milliseconds. Right: the analytic number of floating-point operations of
# that step per sequence, counted from the model's sizes. On log-log axes a cost ∝ L^k is
# a straight line of slope k, whatever the constant in front, so the key gives each
# model's slope, fitted by least squares to log(cost) against log(L) over the lengths
# measured. Two thin grey guides show the slopes 1 (∝ L) and 2 (∝ L²) over the longest
# lengths; they are drawn under every point, so they never cross the data.
#
# Reads. DIR/figure_vars.gp (task, models, train_min, train_max)
#        DIR/cost.tsv, one row per model and length: the median over the runs (seeds) of
#        each run's one measurement at that length (train --cost-lengths: the median of
#        3 timings of a training step on one batch; FLOPs are counted, not timed):
#          model len seeds train_ms_per_seq flops_per_seq decode_ms_per_seq
# Writes. DIR/figures/cost.png and DIR/figures/cost.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/cost.gp
#
# What to look for. The LSTM does a fixed amount of work per token, so its slope is
# close to 1. Attention compares every output position with every input position (L·L
# scores), so the attention models' lines bend upwards and their slopes climb above 1
# as L grows; at short lengths the per-token matrix products still dominate, and the
# fitted slopes stay much nearer 1 than 2: read the slopes, do not assume L². The time panel adds what FLOPs do not count: the Transformer
# computes all positions with large matrix products that run fast, while the recurrent
# models step through time one small product after another.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/cost.gp"
    exit status 2
}
load dir."/figure_vars.gp"
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
data = dir."/cost.tsv"
out  = figs."/cost"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# One colour per group, the same in every figure (Okabe–Ito, safe for colour blindness):
# a model's own colour for its first group, the spare colours for its variants.
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
# "lstm:hidden=256" as the command line says it: "lstm --hidden 256"
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

# The fitted slope of log(cost) against log(L) of each model, for both panels (NaN for a
# model with fewer than two lengths).
array slope_t[n_models]
array slope_f[n_models]
do for [i = 1:n_models] {
    stats data using (strcol("model") eq model(i) ? 1 : 0) nooutput
    slope_t[i] = NaN; slope_f[i] = NaN
    if (STATS_sum >= 2) {
        stats data using (log(of(i, "len"))):(log(of(i, "train_ms_per_seq"))) nooutput
        slope_t[i] = STATS_slope
        stats data using (log(of(i, "len"))):(log(of(i, "flops_per_seq"))) nooutput
        slope_f[i] = STATS_slope
    }
}
key_of(i, k) = pretty(model(i)) . (k == k ? sprintf(tr("cost_slope", ": slope %.2f"), k) : "")

# The ranges of each panel, and the guides: two lines from one point at Lg (two octaves
# under the longest length), one of slope 1 and one of slope 2, over [Lg, L1]. The slope-2
# line is the higher of the two there, so it is put a factor 2.5 under every point in
# that range (its constant: the lowest y / (L / Lg)² over them); then neither crosses a
# line of data.
stats data using "len":"train_ms_per_seq" nooutput
L0 = STATS_min_x; L1 = STATS_max_x
t0 = STATS_min_y; t1 = STATS_max_y
stats data using "len":"flops_per_seq" nooutput
f0 = STATS_min_y; f1 = STATS_max_y
Lg = L1 / 4.0 > L0 ? L1 / 4.0 : L0
stats data using (column("len") >= Lg ? column("train_ms_per_seq") / (column("len") / Lg)**2 : NaN) nooutput
tg = STATS_min / 2.5
stats data using (column("len") >= Lg ? column("flops_per_seq") / (column("len") / Lg)**2 : NaN) nooutput
fg = STATS_min / 2.5
ref(y0, L, k) = y0 * (L / Lg) ** k
# On log-log axes each guide is straight: its two ends are all it takes (columns: L, the
# slope-1 guide of time, the slope-2 one, and the same two of FLOPs).
set print $guides
do for [L in sprintf("%.17g %.17g", Lg, L1)] {
    print sprintf("%s\t%.17g\t%.17g\t%.17g\t%.17g", L, ref(tg, L + 0, 1), \
                  ref(tg, L + 0, 2), ref(fg, L + 0, 1), ref(fg, L + 0, 2))
}
set print "-"
lowest(a, b) = a < b ? a : b
# the bottom of each panel: under the lowest point and the start of both guides
tb = lowest(t0, tg) / 1.5
fb = lowest(f0, fg) / 1.5
stats data using "seeds" nooutput
runs = int(STATS_max)
how = runs > 1 ? sprintf(tr("cost_runs", "median over %d runs of one measurement each"), runs) : \
                 tr("cost_run", "one run, one measurement per length")

mean = "linespoints lw 2 pt 7 ps 0.8"
refline = "lines lw 1.2 lc rgb '#999999'"

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1400, 720 font face.",12" enhanced
    } else {
        set terminal svg size 1400, 720 dynamic enhanced font face.",12" \
            name "cost" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 1, 2 margins 0.08, 0.98, 0.1, 0.87 spacing 0.09 \
        title sprintf(tr("cost_title", "Cost against sequence length (log-log): one training " . \
              "step, forward + backward, per sequence\n{/*0.85 time: %s; in the legend, " . \
              "the slope fitted to each model (1: ∝ L, 2: ∝ L²)}"), how) font ",14"

    set border 3
    set tics nomirror out
    set grid xtics ytics mytics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x 2
    set logscale y 10
    set xrange [L0 / 1.2:L1 * 2.2]   # room right of the data for the guides' labels
    # tics at the lengths, doubling from the shortest: none in the room for the labels
    set xtics ()
    do for [e = 0:int(log(L1 / L0) / log(2) + 0.5)] {
        set xtics add (sprintf("%g", L0 * 2 ** e) L0 * 2 ** e)
    }
    set xlabel tr("cost_x", "sequence length L (tokens, source and target each)")
    set key top left reverse Left noenhanced samplen 2.5 spacing 1.2 opaque

    # ---- left: measured time ------------------------------------------------------------
    set title tr("cost_time_title", "Measured training time per sequence")
    set ylabel tr("cost_time_y", "time per sequence (ms, log scale)")
    set yrange [tb:t1 * 3]
    set format y "%g"
    set label 1 tr("slope1", "slope 1 (∝ L)") at L1, ref(tg, L1, 1) offset 0.5, 0 left \
        tc rgb "#777777"
    set label 2 tr("slope2", "slope 2 (∝ L²)") at L1, ref(tg, L1, 2) offset 0.5, 0 left \
        tc rgb "#777777"
    plot for [i = 1:n_models] data using "len":(of(i, "train_ms_per_seq")) \
             with @mean lc rgb hue[i] title key_of(i, slope_t[i]), \
         $guides using 1:2 with @refline dt 2 notitle, \
         $guides using 1:3 with @refline dt 1 notitle

    # ---- right: analytic FLOPs ----------------------------------------------------------
    set title tr("cost_flops_title", "Analytic FLOPs per sequence")
    set ylabel tr("cost_flops_y", "floating-point operations per sequence (log scale)")
    set yrange [fb:f1 * 3]
    set format y "10^{%T}"
    set label 1 tr("slope1", "slope 1 (∝ L)") at L1, ref(fg, L1, 1) offset 0.5, 0 left \
        tc rgb "#777777"
    set label 2 tr("slope2", "slope 2 (∝ L²)") at L1, ref(fg, L1, 2) offset 0.5, 0 left \
        tc rgb "#777777"
    plot for [i = 1:n_models] data using "len":(of(i, "flops_per_seq")) \
             with @mean lc rgb hue[i] title key_of(i, slope_f[i]), \
         $guides using 1:4 with @refline dt 2 notitle, \
         $guides using 1:5 with @refline dt 1 notitle

    unset multiplot
    set output
    # back to linear axes for the next format (a log axis set twice warns)
    unset label 1; unset label 2
    unset logscale x; unset logscale y
}
print "cost.gp: wrote ".out." (".formats.")"
