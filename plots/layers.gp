# layers.gp — one layer of each kind measured against Vaswani et al. 2017, Table 1.
#
# What it shows. A grid of panels on log-log axes, one column per width d, against the
# number of positions n of one sequence (batch 1), one line per layer (the LSTM and GRU
# recurrent layers, multi-head self-attention), all at one BLAS thread:
#   row 1  the measured time of forward + backward (median of the repetitions, the bar
#          from the fastest to the slowest), with the n where each recurrent layer's
#          median time crosses attention's (solid grey line, labelled) — Table 1's
#          "complexity per layer" as seconds;
#   row 2  the analytic FLOPs of forward + backward, with the n where the FLOP formulas
#          cross (dashed) — the same column as counted operations;
#   row 3  the path of the gradient from the last output back to the first input,
#          |u·∂y_n/∂x_1| over the mean of all n rows of ∂y_n/∂X — Table 1's "maximum
#          path length": it collapses with n through a recurrence and stays near 1
#          through attention.
# Table 1's third column, sequential operations, is a count (2n + 2 for a recurrent
# layer, 8 for attention) and is printed in the title of the grid, not drawn.
#
# Reads. DIR/layers.tsv, one row per layer, width, length and thread count:
#          layer kind d n threads flops seconds_median seconds_min seconds_max gflops
#          sequential_ops path_grad_norm path_grad_rel
#        DIR/layers-crossover.tsv, one row per recurrent layer, width and thread count:
#          recurrent attention d threads n_flops n_time
#        (both written by `attnlab bench --layers --out DIR`)
# Writes. DIR/figures/layers.png and DIR/figures/layers.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='docs/figures/layers'" plots/layers.gp
#
# What to look for. Where n is small, the recurrent layers' FLOPs (∝ n·d²) are above
# attention's, but once n passes about 2d (LSTM) or d (GRU) attention's n²·d term wins
# and its FLOP line bends up to slope 2. The measured times cross later than the FLOPs
# do: a recurrent layer makes n small products one after another, which run far below
# the rate of attention's few large ones. And the path panel is the reason attention is
# worth its cost: through a recurrence the first input's influence on the last output
# shrinks by orders of magnitude with every doubling of n; through attention it does not.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='docs/figures/layers'\" plots/layers.gp"
    exit status 2
}
if (!exists("figs")) { figs = dir."/figures" }
# The formats to draw, each a file: PNG and SVG, or what formats= names ("svg" in the
# page in the browser).
if (!exists("formats")) { formats = "png svg" }
data  = dir."/layers.tsv"
cross = dir."/layers-crossover.tsv"
out   = figs."/layers"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# The layers, widths and lengths measured, read from the table (one thread only).
stats data using "d" nooutput
d_lo = STATS_min; d_hi = STATS_max
widths = ""
do for [w = int(d_lo):int(d_hi)] {
    stats data using (column("d") == w && column("threads") == 1 ? 1 : 0) nooutput
    if (STATS_sum > 0) { widths = widths . sprintf(" %d", w) }
}
n_widths = words(widths)
layer_names = "lstm gru mha"
n_layers = words(layer_names)
layer(i) = word(layer_names, i)
hue(i) = i == 1 ? "#D55E00" : i == 2 ? "#0072B2" : "#009E73"
about(i) = i == 1 ? "LSTM layer (recurrent)" : i == 2 ? "GRU layer (recurrent)" : \
           "self-attention (d/16 heads)"
# A row of layer i at width w, one thread; any other row gives NaN (no point).
of(i, w, col) = strcol("layer") eq layer(i) && column("d") == w && \
                column("threads") == 1 ? column(col) : NaN
stats data using "n" nooutput
n_lo = STATS_min; n_hi = STATS_max

mean = "linespoints lw 2 pt 7 ps 0.7"
# the key once, in the first column
title_of(i, c) = c == 1 ? about(i) : ""
bars = "yerrorbars lw 1 pt -1"

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1500, 1250 font "sans,12" enhanced
    } else {
        set terminal svg size 1500, 1250 dynamic enhanced font "sans,12" \
            name "layers" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 3, n_widths columnsfirst margins 0.07, 0.96, 0.06, 0.9 \
        spacing 0.06, 0.07 \
        title "One layer, one sequence of n positions (batch 1), forward + backward, one " . \
              "BLAS thread\n{/*0.85 sequential operations: 2n + 2 for a recurrent layer, 8 " . \
              "for self-attention (Vaswani et al. 2017, Table 1: O(n) against O(1))}" font ",14"
    set border 3
    set tics nomirror out
    set grid xtics ytics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x 2
    set logscale y 10
    set xrange [n_lo / 1.3:n_hi * 1.3]
    set format x "%g"
    set key bottom right reverse Left samplen 2.5 spacing 1.1 noenhanced

    do for [c = 1:n_widths] {
        w = int(word(widths, c))
        # the crossings of this width, one thread: solid (time) and dashed (FLOPs)
        array nt[2]
        array nf[2]
        do for [r = 1:2] {
            undefine STATS_*
            stats cross using (strcol("recurrent") eq layer(r) && column("d") == w && \
                               column("threads") == 1 ? column("n_time") : NaN) nooutput
            nt[r] = NaN
            if (exists("STATS_max")) { if (STATS_max == STATS_max) { nt[r] = STATS_max } }
            undefine STATS_*
            stats cross using (strcol("recurrent") eq layer(r) && column("d") == w && \
                               column("threads") == 1 ? column("n_flops") : NaN) nooutput
            nf[r] = NaN
            if (exists("STATS_max")) { if (STATS_max == STATS_max) { nf[r] = STATS_max } }
        }

        # ---- row 1: measured time ---------------------------------------------------
        set key bottom right
        set title sprintf("d = %d: measured time", w)
        set xlabel ""
        set ylabel (c == 1 ? "ms, forward + backward (log scale)" : "")
        set yrange [*:*]
        set format y "%g"
        unset arrow
        unset label
        # the LSTM's crossing is labelled right of its line, the GRU's (further left) left
        do for [r = 1:2] {
            if (nt[r] == nt[r]) {
                set arrow r from nt[r], graph 0 to nt[r], graph 1 nohead lw 1.5 \
                    lc rgb hue(r) dt 1 back
                if (r == 1) {
                    set label r sprintf("%s = attention\nat n ≈ %.0f", layer(r), nt[r]) \
                        at nt[r], graph 0.93 offset 0.5, 0 left tc rgb hue(r) font ",10"
                } else {
                    set label r sprintf("%s = attention\nat n ≈ %.0f", layer(r), nt[r]) \
                        at nt[r], graph 0.93 offset -0.5, 0 right tc rgb hue(r) font ",10"
                }
            }
        }
        plot for [i = 1:n_layers] data using "n":(1e3 * of(i, w, "seconds_median")): \
                 (1e3 * of(i, w, "seconds_min")):(1e3 * of(i, w, "seconds_max")) \
                 with @bars lc rgb hue(i) notitle, \
             for [i = 1:n_layers] data using "n":(1e3 * of(i, w, "seconds_median")) \
                 with @mean lc rgb hue(i) title title_of(i, c)

        # ---- row 2: analytic FLOPs --------------------------------------------------
        set title sprintf("d = %d: analytic FLOPs", w)
        set ylabel (c == 1 ? "floating-point operations (log scale)" : "")
        set format y "10^{%T}"
        unset arrow
        unset label
        do for [r = 1:2] {
            if (nf[r] == nf[r]) {
                set arrow r from nf[r], graph 0 to nf[r], graph 1 nohead lw 1.5 \
                    lc rgb hue(r) dt 2 back
                if (r == 1) {
                    set label r sprintf("%s = attention\nat n ≈ %.0f", layer(r), nf[r]) \
                        at nf[r], graph 0.93 offset 0.5, 0 left tc rgb hue(r) font ",10"
                } else {
                    set label r sprintf("%s = attention\nat n ≈ %.0f", layer(r), nf[r]) \
                        at nf[r], graph 0.93 offset -0.5, 0 right tc rgb hue(r) font ",10"
                }
            }
        }
        plot for [i = 1:n_layers] data using "n":(of(i, w, "flops")) \
                 with @mean lc rgb hue(i) title title_of(i, c)

        # ---- row 3: path of the gradient --------------------------------------------
        set title sprintf("d = %d: gradient from the last output to the first input", w)
        set xlabel "positions n (log scale)"
        set ylabel (c == 1 ? "first row / mean row of ∂y_n/∂X (log scale)" : "")
        set format y "10^{%T}"
        unset arrow
        unset label
        set key bottom left
        # rows that underflowed to 0 have no logarithm: they are left out, not drawn at 0
        plot for [i = 1:n_layers] data using "n":(of(i, w, "path_grad_rel") > 0 ? \
                 of(i, w, "path_grad_rel") : NaN) with @mean lc rgb hue(i) title title_of(i, c)
    }
    unset multiplot
    set output
    unset logscale x; unset logscale y
}
print "layers.gp: wrote ".out." (".formats.")"
