# cost.gp — what each model costs as sequences grow: measured time and counted FLOPs.
#
# What it shows. Two panels on log-log axes, one line per model, against the sequence
# length L. Left: the measured time of one training step (forward and backward) per
# sequence, in milliseconds. Right: the analytic number of floating-point operations of
# that step per sequence, counted from the model's sizes. The thin grey lines are
# reference slopes: on log-log axes a cost ∝ L is a straight line of slope 1 and a cost
# ∝ L² a line of slope 2, whatever the constant in front.
#
# Reads. DIR/figure_vars.gp (task, models, train_min, train_max)
#        DIR/cost.tsv, one row per model and length (medians over seeds):
#          model len seeds train_ms_per_seq flops_per_seq decode_ms_per_seq
# Writes. DIR/figures/cost.png and DIR/figures/cost.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/cost.gp
#
# What to look for. The LSTM does a fixed amount of work per token, so its lines run
# parallel to the ∝ L reference. Attention compares every output position with every
# input position (L·L scores), so the attention models' lines bend upwards towards the
# ∝ L² slope as L grows; at short lengths the per-token matrix products still dominate
# and they look linear. The time panel adds what FLOPs do not count: the Transformer
# computes all positions with large matrix products that run fast, while the recurrent
# models step through time one small product after another.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/cost.gp"
    exit status 2
}
load dir."/figure_vars.gp"
# Paths go to a shell only inside single quotes, each ' written '\'' (shq), so a folder
# name cannot become a command.
shq_body(s) = strstrt(s, "'") == 0 ? s : \
    s[1:strstrt(s, "'") - 1]."'\\''".shq_body(s[strstrt(s, "'") + 1:])
shq(s) = "'".shq_body(s)."'"
# The figures go to DIR/figures, or to the folder figs names (attnlab report passes a
# temporary one and moves each figure into DIR/figures once it is complete).
if (!exists("figs")) { figs = dir."/figures" }
data = dir."/cost.tsv"
out  = figs."/cost"
system("mkdir -p ".shq(figs))

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# One colour per model, the same in every figure (Okabe–Ito, safe for colour blindness).
colour(m) = m eq "lstm" ? "#D55E00" : m eq "rnn_attention" ? "#0072B2" : \
            m eq "transformer" ? "#009E73" : "#CC79A7"
n_models = words(models)
model(i) = word(models, i)
# A row belongs to model i when its first column names it; other rows give NaN (no point).
of(i, col) = strcol("model") eq model(i) ? column(col) : NaN

# The ranges of each panel, to anchor the reference slopes half a decade under the
# cheapest point: ref(L) = y0 · (L / L0)^k for k = 1 and 2.
stats data using "len":"train_ms_per_seq" nooutput
L0 = STATS_min_x; L1 = STATS_max_x
t0 = STATS_min_y / 3.0; t1 = STATS_max_y
stats data using "len":"flops_per_seq" nooutput
f0 = STATS_min_y / 3.0; f1 = STATS_max_y
ref(y0, L, k) = y0 * (L / L0) ** k
# where the ∝ L² line leaves the top of a panel whose y range ends at ytop
exit_L(y0, ytop) = L0 * sqrt(ytop / y0)

mean = "linespoints lw 2 pt 7 ps 0.8"
refline = "lines lw 1.2 lc rgb '#999999'"

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1400, 720 font "sans,12" enhanced
    } else {
        set terminal svg size 1400, 720 dynamic enhanced font "sans,12" \
            name "cost" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 1, 2 margins 0.08, 0.98, 0.2, 0.87 spacing 0.09 \
        title "Cost against sequence length " . \
              "(log-log; one training step, forward + backward; medians over seeds)" \
        font ",14"

    set border 3
    set tics nomirror out
    set grid xtics ytics mytics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x 2
    set logscale y 10
    set xrange [L0 / 1.2:L1 * 1.2]
    set xtics format "%g"
    set xlabel "sequence length L (tokens, source and target each)"
    unset key

    # ---- left: measured time ------------------------------------------------------------
    set title "Measured training time per sequence"
    set ylabel "time per sequence (ms, log scale)"
    set yrange [t0 / 1.5:t1 * 3]
    set format y "%g"
    set label 1 "∝ L" at L1, ref(t0, L1, 1) offset 0.5, 0 left tc rgb "#777777"
    set label 2 "∝ L²" at exit_L(t0, t1 * 3) / 1.2, t1 * 3 / 1.2 right tc rgb "#777777"
    plot for [i = 1:n_models] data using "len":(of(i, "train_ms_per_seq")) \
             with @mean lc rgb colour(model(i)) notitle, \
         [L0:L1] ref(t0, x, 1) with @refline dt 2 notitle, \
         [L0:L1] ref(t0, x, 2) with @refline dt 1 notitle

    # ---- right: analytic FLOPs ----------------------------------------------------------
    set title "Analytic FLOPs per sequence"
    set ylabel "floating-point operations per sequence (log scale)"
    set yrange [f0 / 1.5:f1 * 3]
    set format y "10^{%T}"
    set label 1 "∝ L" at L1, ref(f0, L1, 1) offset 0.5, 0 left tc rgb "#777777"
    set label 2 "∝ L²" at exit_L(f0, f1 * 3) / 1.2, f1 * 3 / 1.2 right tc rgb "#777777"
    plot for [i = 1:n_models] data using "len":(of(i, "flops_per_seq")) \
             with @mean lc rgb colour(model(i)) notitle, \
         [L0:L1] ref(f0, x, 1) with @refline dt 2 notitle, \
         [L0:L1] ref(f0, x, 2) with @refline dt 1 notitle

    # ---- one legend for both panels, in a row under them ------------------------------
    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset label 1; unset label 2
    unset logscale x; unset logscale y
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.08
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_models] NaN with @mean lc rgb colour(model(i)) title model(i), \
         NaN with @refline dt 2 title "∝ L (slope 1)", \
         NaN with @refline dt 1 title "∝ L² (slope 2)"

    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
}
print "cost.gp: wrote ".out.".png and ".out.".svg"
