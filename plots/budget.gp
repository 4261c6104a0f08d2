# budget.gp — how much training each model needs: validation accuracy against steps and
# against seconds.
#
# What it shows. Four panels, one line per model (the median over seeds, with a band from
# the lowest to the highest seed). Top row: the whole-sequence accuracy at the longest
# training length (the validation set's longest length, greedy decoding): the hardest
# in-range question, where every token of the longest sequences must be right. Bottom
# row: the validation token accuracy (mean over the validation lengths). Left column
# against the training step, right column against the training seconds (validation time
# left out), both on log scales so that 300 and 30,000 steps both read.
#
# Reads. DIR/figure_vars.gp (train_min, train_max, task, models, seeds)
#        DIR/budget.tsv, one row per model and logged step, statistics over seeds:
#          model step seeds running seconds_median seq_median seq_min seq_max
#          tok_median tok_min tok_max
#          capped
#        (a run stopped early by the stopping rule is carried at its last validation
#        after it stopped: `running` counts the seeds still training; `capped` counts
#        the runs whose last validation, at the cap, is at that step)
#        DIR/budget_at.tsv, one row per model, measure and level: the steps and seconds
#        to the first validation at that accuracy, median over seeds ("> N" when the
#        median falls on a run that never got there)
# Writes. DIR/figures/budget.png and DIR/figures/budget.svg (into FIGS/ instead when
#         figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/budget.gp
#
# What to look for. Read the figure at a vertical line: at that budget (steps or
# seconds), which models have learned the task inside the training range? The gap
# between two curves along the x axis is how many times more training one model needs to
# reach the same accuracy. A cross marks the last validation of runs the cap stopped:
# they did not reach the target within the cap, and their line says where they were,
# not where they would have ended. The circles are the medians of budget_at.tsv: filled
# where the median run reached that accuracy (0.9, 0.99, 0.999 tokens; 0.5, 0.9 whole
# sequences), open at "more than N" where it did not.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/budget.gp"
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
data = dir."/budget.tsv"
at_data = dir."/budget_at.tsv"
out  = figs."/budget"

set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# A comparison whose runs logged no validation (an older attnlab) has an empty table.
stats data using "step" nooutput
if (!exists("STATS_records") || STATS_records == 0) {
    print "budget.gp: no run logged a validation (train_log.tsv without val_ columns): skipping budget"
    exit
}

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
of(i, col) = strcol("model") eq model(i) ? column(col) : NaN

# budget_at.tsv's medians: a number, or "> N" (a bound: the median run never got there)
bound(s) = s[1:1] eq ">"
at_number(s) = bound(s) ? real(s[3:]) : real(s)
at_of(i, meas, col) = strcol("model") eq model(i) && strcol("measure") eq meas ? \
    at_number(strcol(col)) : NaN

band = "fs transparent solid 0.22 noborder"
mid  = "lines lw 2"

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1300, 980 font face.",12" enhanced
    } else {
        set terminal svg size 1300, 980 dynamic enhanced font face.",12" \
            name "budget" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 2, 2 margins 0.08, 0.98, 0.13, 0.9 spacing 0.09, 0.11 \
        title sprintf(tr("bud_title", "Task %s: validation accuracy against training budget, lengths %d–%d " . \
                      "(line = median over %d seed(s), band = min–max)"), \
                      task, train_min, train_max, seeds) font ",14" noenhanced
    set border 3
    set tics nomirror out
    set grid xtics ytics mxtics lc rgb "#D4D4D4" lw 1 dt 3
    set logscale x
    set format x "10^{%T}"
    unset key
    set yrange [0:1.05]
    set format y "%.1f"

    do for [row = 1:2] {
        do for [col = 1:2] {
            x = col == 1 ? "step" : "seconds_median"
            set xlabel (col == 1 ? tr("bud_x_steps", "training steps (log scale)") \
                                 : tr("bud_x_secs", "training seconds (log scale, median over seeds)"))
            lo = row == 1 ? "seq_min" : "tok_min"
            hi = row == 1 ? "seq_max" : "tok_max"
            md = row == 1 ? "seq_median" : "tok_median"
            if (row == 1) {
                set title sprintf(tr("bud_seq_title", "Whole sequences right at length %d, against %s"), \
                                  train_max, col == 1 ? tr("steps", "steps") : tr("seconds", "seconds"))
                set ylabel sprintf(tr("bud_seq_y", "sequence accuracy at L = %d (greedy)"), train_max)
            } else {
                set title sprintf(tr("bud_tok_title", "Validation token accuracy, against %s"), \
                                  col == 1 ? tr("steps", "steps") : tr("seconds", "seconds"))
                set ylabel sprintf(tr("bud_tok_y", "token accuracy, L = %d–%d (greedy)"), train_min, train_max)
            }
            meas = row == 1 ? "val_seq_acc_max" : "val_token_acc"
            ax = col == 1 ? "steps_median" : "seconds_median"
            plot for [i = 1:n_models] data using x:(of(i, lo)):(of(i, hi)) \
                     with filledcurves @band lc rgb hue[i] notitle, \
                 for [i = 1:n_models] data using x:(of(i, md)) \
                     with @mid lc rgb hue[i] notitle, \
                 for [i = 1:n_models] data using x:(of(i, md)):(of(i, "capped") > 0 ? 2.2 : 0) \
                     with points pt 2 lw 2 ps variable lc rgb hue[i] notitle, \
                 for [i = 1:n_models] at_data using (at_of(i, meas, ax)):(at_of(i, meas, "level")):\
                     (bound(strcol(ax)) ? 0 : 1.3) with points pt 7 ps variable lc rgb hue[i] notitle, \
                 for [i = 1:n_models] at_data using (at_of(i, meas, ax)):(at_of(i, meas, "level")):\
                     (bound(strcol(ax)) ? 1.3 : 0) with points pt 6 ps variable lc rgb hue[i] notitle
        }
    }

    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset logscale x
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.05
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_models] NaN with @mid lc rgb hue[i] title pretty(model(i)), \
         NaN with points pt 2 lw 2 ps 1.5 lc rgb "black" title tr("bud_capped", "cap ended the run"), \
         NaN with points pt 7 ps 1.3 lc rgb "black" title tr("bud_at", "median at a level"), \
         NaN with points pt 6 ps 1.3 lc rgb "black" title tr("bud_not", "median not reached")

    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    set xrange [*:*]; set yrange [*:*]
    # and the tics back on as the pass found them: `set tics` turns on an axis whose tics
    # `unset tics` turned off, mirrored, so the next format would differ from this one
    set xtics; set ytics; set ztics; set cbtics
}
print "budget.gp: wrote ".out." (".formats.")"
