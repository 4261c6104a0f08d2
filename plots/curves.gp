# curves.gp — training curves: how fast each model learns, in steps and in seconds.
#
# What it shows. Four panels, one line per model (the mean over seeds, with a band from
# the lowest to the highest seed). Top row against the training step: the training loss
# (log scale) and the teacher-forced token accuracy. Bottom row: the same two quantities
# against the wall-clock seconds of training, so a model that needs fewer steps but takes
# longer per step is seen for what it costs.
#
# Dashed, the same quantities on the held-out validation set (fresh sequences inside the
# training range, greedy decoding for the accuracy), mean over seeds: overfitting would
# show as the validation loss rising while the training loss falls.
#
# Reads. DIR/figure_vars.gp (train_min, train_max, chance, symbols, task, models, seeds)
#        DIR/curves.tsv, one row per model and logged step, statistics over seeds:
#          model step seeds seconds_mean loss_mean loss_min loss_max
#          acc_mean acc_min acc_max val_loss_mean val_loss_min val_loss_max
#          val_acc_mean val_acc_min val_acc_max (nan: the runs logged no validation)
# Writes. DIR/figures/curves.png and DIR/figures/curves.svg (into FIGS/ instead
#         when figs='FIGS' is given)
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/curves.gp
#
# What to look for. Every model starts at the loss of guessing, ln(symbols) (≈ 2.30 for
# 10 symbols), on the dotted line. A plateau there means the model has not yet found how
# to route information from the source to the output; the sudden drop after it is the
# moment it does (attention models often show it most sharply). The accuracy here is
# teacher-forced (the decoder is given the right previous token), so it is higher than
# the greedy accuracy of accuracy.gp. Compare the rows: a model ahead in steps can be
# behind in seconds when each of its steps costs more.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/curves.gp"
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
data = dir."/curves.tsv"
out  = figs."/curves"

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

if (!exists("seeds")) {
    stats data using "seeds" nooutput
    seeds = int(STATS_max)
}
guess = log(symbols)  # cross-entropy of a uniform guess among the data symbols (nats)

band = "fs transparent solid 0.22 noborder"
mean = "lines lw 2"
held = "lines lw 1.5 dt (6, 4)"   # the held-out validation set

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size 1300, 980 font face.",12" enhanced
    } else {
        set terminal svg size 1300, 980 dynamic enhanced font face.",12" \
            name "curves" background rgb "white"
    }
    set output out.".".fmt
    set multiplot layout 2, 2 margins 0.08, 0.98, 0.13, 0.9 spacing 0.09, 0.11 \
        title sprintf(tr("curv_title", "Task %s: training curves, lengths %d–%d " . \
                      "(teacher forcing; line = mean over %d seed(s), band = min–max)"), \
                      task, train_min, train_max, seeds) font ",14" noenhanced

    set border 3
    set tics nomirror out
    set grid xtics ytics mytics lc rgb "#D4D4D4" lw 1 dt 3
    unset key

    do for [row = 1:2] {
        # the x axis of this row: training steps, then training seconds
        x = row == 1 ? "step" : "seconds_mean"
        set xlabel (row == 1 ? tr("curv_x_step", "training step") \
                             : tr("curv_x_time", "training time (seconds, mean over seeds)"))
        set xrange [0:*]
        set autoscale xfixmax

        # ---- loss, log scale ----------------------------------------------------------
        set title (row == 1 ? tr("curv_loss_step", "Training loss against step") \
                            : tr("curv_loss_time", "Training loss against time"))
        set ylabel tr("curv_loss_y", "loss (cross-entropy per token, nats; log scale)")
        set logscale y
        set yrange [*:*]
        set format y "%g"
        set label 1 sprintf(tr("curv_guess", "uniform guess: ln %d ≈ %.2f"), symbols, guess) \
            at graph 0.98, first guess offset 0, 0.7 right tc rgb "#444444"
        plot for [i = 1:n_models] data using x:(of(i, "loss_min")):(of(i, "loss_max")) \
                 with filledcurves @band lc rgb hue[i] notitle, \
             for [i = 1:n_models] data using x:(of(i, "loss_mean")) \
                 with @mean lc rgb hue[i] notitle, \
             for [i = 1:n_models] data using x:(of(i, "val_loss_mean")) \
                 with @held lc rgb hue[i] notitle, \
             guess with lines dt 3 lw 1.5 lc rgb "#444444" notitle
        unset logscale y

        # ---- teacher-forced token accuracy --------------------------------------------
        set title (row == 1 ? tr("curv_acc_step", "Token accuracy against step") \
                            : tr("curv_acc_time", "Token accuracy against time"))
        set ylabel tr("curv_acc_y", "token accuracy, teacher-forced (0–1)")
        set yrange [0:1.05]
        set format y "%.1f"
        set label 1 sprintf(tr("chance", "chance = 1/%d"), symbols) \
            at graph 0.98, first chance offset 0, 0.7 right tc rgb "#444444"
        plot for [i = 1:n_models] data using x:(of(i, "acc_min")):(of(i, "acc_max")) \
                 with filledcurves @band lc rgb hue[i] notitle, \
             for [i = 1:n_models] data using x:(of(i, "acc_mean")) \
                 with @mean lc rgb hue[i] notitle, \
             for [i = 1:n_models] data using x:(of(i, "val_acc_mean")) \
                 with @held lc rgb hue[i] notitle, \
             chance with lines dt 2 lw 1.5 lc rgb "#444444" notitle
    }

    # ---- one legend for every panel, in a row under them -------------------------------
    unset title; unset xlabel; unset ylabel; unset grid; unset border; unset tics
    unset label 1
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set bmargin at screen 0.0;  set tmargin at screen 0.05
    set xrange [0:1]; set yrange [0:1]
    set key center center horizontal maxrows 1 samplen 3 noenhanced
    plot for [i = 1:n_models] NaN with @mean lc rgb hue[i] title pretty(model(i)), \
         NaN with lines lw 2 lc rgb "#444444" title tr("curv_train", "training (teacher-forced)"), \
         NaN with @held lc rgb "#444444" title tr("curv_val", "validation (greedy, held out)")

    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    # and the tics back on as the pass found them: `set tics` turns on an axis whose tics
    # `unset tics` turned off, mirrored, so the next format would differ from this one
    set xtics; set ytics; set ztics; set cbtics
}
print "curves.gp: wrote ".out." (".formats.")"
