# gates.gp — inside the LSTM: its gates and cell state over the steps of one example.
#
# What it shows. A handful of hidden units, chosen so that a student can follow each one:
# the K = 8 units with the longest memory, those whose forget gate is highest on average
# over every step of the example (encoder and decoder), sorted, the longest memory at
# the top. A grid of heat maps, one column for the encoder (reading the source) and one
# for the decoder (writing the output); one row each for the input gate i_t, the forget
# gate f_t, the output gate o_t and the cell state c_t. In every panel the x axis is the
# step (labelled with the token read or written at that step) and the y axis the unit.
# Gates run from 0 (closed, white) to 1 (open, dark purple); the cell state is signed,
# blue below 0 and red above, white at 0. Under the grid, the mean forget gate of every
# unit, sorted from the highest down, with the K units shown dark: how rare long memories
# are among all the units.
#
#   c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t      h_t = o_t ⊙ tanh(c_t)
#
# Reads. DIR/figure_vars.gp, not read when trace= is given (task; models, whose first
#        LSTM group names the trace folder, e.g. trace/lstm:hidden=256/ in a sweep;
#        traced, the groups whose trace folder holds a trace_vars.gp)
#        DIR/trace/lstm/trace_vars.gp, which attnlab writes beside the matrices below:
#        their tokens as strings and their values as datablocks (the matrices themselves
#        are not read: without a shell gnuplot cannot cut their labels off)
#        DIR/trace/lstm/enc.gate_i.tsv enc.gate_f.tsv enc.gate_o.tsv enc.cell.tsv
#                       (src × unit: one row per source step, one column per unit)
#        DIR/trace/lstm/dec.gate_i.tsv dec.gate_f.tsv dec.gate_o.tsv dec.cell.tsv
#                       (tgt × unit)
#        labelled matrices as in docs/results-format.md; the rows become the x axis here.
#        The tokens are plain text and drawn as written: a token of your own data may
#        be any word, '#', '"' and '{' included.
# Writes. DIR/figures/gates.png and DIR/figures/gates.svg, or the formats formats= names
#         (FIGS/ instead with figs='FIGS', which must exist); nothing (with a message) when the LSTM was not traced.
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/gates.gp
# For the trace of a single run (e.g. `make demo`), name its folder with trace=:
#     gnuplot -e "dir='results/demo/runs/lstm-s1/trace'; trace='results/demo/runs/lstm-s1/trace'" plots/gates.gp
#
# What to look for. The LSTM has no attention: the gates are its only way of choosing
# what to keep. A unit whose forget gate stays near 1 (dark) keeps its cell value from
# step to step, a memory; a forget gate near 0 wipes it. Input gates open on the steps
# whose token a unit stores. In the cell-state row, look for units that hold a steady
# colour across the encoder and change colour only in the decoder: they carry a piece of
# the source to the output. The bottom panel shows how few units keep their memory: with
# 128 units and a long source, few units can hold one token each, which is why the LSTM
# forgets as sequences grow.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/gates.gp"
    exit status 2
}
set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# The task's name comes from a file name (task file:PATH), so attnlab writes it in
# figure_vars.gp as a single-quoted string, never code; titles that show it are drawn
# without enhanced text.
# A comparison directory's facts (task, models, and which groups were traced); the trace
# of a single run (trace=FOLDER) comes without them.
if (!exists("trace")) { load dir."/figure_vars.gp" }
if (!exists("task")) { task = "" }
# A group of runs is named after its model, plus the settings that tell its setups apart
# ("lstm:hidden=256"); people read it as the command line said it ("lstm --hidden 256").
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
pretty(m) = strstrt(m, ":") == 0 ? m : base_of(m)." ".flags(m[strstrt(m, ":") + 1:])
enh(s) = strstrt(s, "_") == 0 ? s : s[1:strstrt(s, "_") - 1]."\\_".enh(s[strstrt(s, "_") + 1:])
# The first group of `models` that is an LSTM (its trace folder), else plain "lstm".
group = "lstm"
if (exists("models")) {
    do for [i = words(models):1:-1] {
        if (base_of(word(models, i)) eq "lstm") { group = word(models, i) }
    }
}
# Where the matrices are: the group's folder of a comparison, or the one given.
tdir = exists("trace") ? trace : dir."/trace/".group
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
out  = figs."/gates"
parts = "enc dec"
kinds = "gate_i gate_f gate_o cell"

# A matrix file holds the tokens in its first column (and the unit numbers in its first
# row), the values elsewhere. gnuplot's data reader would take a token starting with '#'
# for a comment and a '"' for the start of a quoted string, and its enhanced text would
# take x_1 for a subscript. So attnlab writes, beside the files, trace_vars.gp: for each
# NAME.tsv, under the stem tr_NAME (every character but letters and digits as _), the
# values alone as a datablock $tr_NAME and the tokens as one string (tr_NAME_rows,
# separated by tabs) that is never parsed; they are drawn as tic labels with enhanced
# text off. figure_vars.gp's traced names the groups whose folder has one.
is_traced(g) = strstrt(" ".traced." ", " ".g." ") > 0
if (exists("trace")) {
    load trace."/trace_vars.gp"
} else {
    if (!exists("traced")) { traced = "" }
    if (is_traced(group)) { load tdir."/trace_vars.gp" }
}
stem(p, g) = "tr_".p."_".g   # enc.gate_i.tsv: tr_enc_gate_i
numbers(m) = "$".m
row_labels(m) = value(m."_rows")   # separated by tabs
# item k (from 1) of the list s whose items are separated by sep
item(s, sep, k) = k <= 1 ? (strstrt(s, sep) == 0 ? s : s[1:strstrt(s, sep) - 1]) : \
    item(s[strstrt(s, sep) + 1:], sep, k - 1)

missing = ""
do for [p in parts] {
    do for [g in kinds] {
        if (!exists(stem(p, g)."_corner")) { missing = missing." ".p.".".g.".tsv" }
    }
}
if (strlen(missing) > 0) {
    print "gates.gp: no".missing." in ".tdir." (lstm not traced): skipping gates"
    exit
}

# ---- choose the units ----------------------------------------------------------------
# The mean forget gate of unit u over every step of both halves; the K highest, sorted.
stats $tr_enc_gate_f matrix nooutput
units = int(STATS_size_x)
K = units < 8 ? units : 8
array fmean[units]
do for [u = 0:units - 1] {
    stats $tr_enc_gate_f matrix every ::u::u using 3 nooutput
    s_enc = STATS_sum; n_enc = STATS_records
    stats $tr_dec_gate_f matrix every ::u::u using 3 nooutput
    fmean[u + 1] = (s_enc + STATS_sum) / (n_enc + STATS_records)
}
# chosen[r] is the unit (from 0) of rank r (from 1): K passes of "the largest not taken"
array chosen[K]
array taken[units]
do for [u = 1:units] { taken[u] = 0 }
do for [r = 1:K] {
    best = 0
    do for [u = 1:units] {
        if (!taken[u] && (best == 0 || fmean[u] > fmean[best])) { best = u }
    }
    taken[best] = 1
    chosen[r] = best - 1
}
kth = fmean[chosen[K] + 1]   # the lowest mean among the chosen

# ---- read the chosen rows of the eight matrices ---------------------------------------
# The files have one row per step and one column per unit; the figure wants steps along
# x and the chosen units along y, by rank (0 = longest memory, at the top), so each
# matrix becomes a datablock ($enc_gate_i, ...) of (step, rank, value) triples.
do for [p in parts] {
    do for [g in kinds] {
        f = numbers(stem(p, g))
        eval sprintf("set table $%s_%s", p, g)
        plot f matrix every ::chosen[1]::chosen[1] using 2:(0):3 with table
        unset table
        do for [r = 2:K] {
            u = chosen[r]
            eval sprintf("set table $%s_%s append", p, g)
            plot f matrix every ::u::u using 2:(r - 1):3 with table
            unset table
        }
    }
}
# Every unit's mean forget gate, sorted from the highest: (rank from 1, mean, chosen?).
set print $means
do for [u = 1:units] {
    above = 0
    do for [v = 1:units] { above = above + (fmean[v] > fmean[u] || (fmean[v] == fmean[u] && v < u)) }
    print sprintf("%d\t%.6f\t%d", above + 1, fmean[u], taken[u])
}
set print "-"
# The tokens of each step (the row labels), separated by tabs.
enc_tokens = row_labels("tr_enc_gate_i")
dec_tokens = row_labels("tr_dec_gate_i")
enc_steps = tr_enc_gate_i_ny
dec_steps = tr_dec_gate_i_ny
# One colour scale for the cell state of the chosen units in both halves, symmetric
# about 0.
stats $enc_cell using 3 nooutput
cmax = abs(STATS_min) > abs(STATS_max) ? abs(STATS_min) : abs(STATS_max)
stats $dec_cell using 3 nooutput
cmax = abs(STATS_min) > cmax ? abs(STATS_min) : cmax
cmax = abs(STATS_max) > cmax ? abs(STATS_max) : cmax
cmax = cmax > 0 ? cmax : 1

kind_name(g) = g eq "gate_i" ? tr("gate_i", "input gate i_t (1 = write the new input)") : \
               g eq "gate_f" ? tr("gate_f", "forget gate f_t (1 = keep the memory)") : \
               g eq "gate_o" ? tr("gate_o", "output gate o_t (1 = show the memory)") : \
               tr("gate_c", "cell state c_t (the memory itself)")
part_name(p) = p eq "enc" ? tr("encoder", "Encoder") : tr("decoder", "Decoder")
tokens_of(p) = p eq "enc" ? enc_tokens : dec_tokens
steps_of(p) = p eq "enc" ? enc_steps : dec_steps
steps_name(p) = p eq "enc" ? tr("gate_x_enc", "source step (token read)") : \
                tr("gate_x_dec", "output step (token written)")

# Layout in pixels: 4 rows × 2 columns of panels (one band of 26 px per unit), colour
# scales on the right, the overview of every unit at the bottom.
pw = 480; ph = 26 * K; gap = 130; vgap = 95; left = 110; right = 150; top = 130
oh = 190; bottom = 80 + oh + 110
W = left + 2 * pw + gap + right
H = top + 4 * ph + 3 * vgap + bottom
lstm_name = group eq "lstm" ? "LSTM" : "LSTM (".pretty(group).")"
# (drawn without enhanced text: the task's name is any file name)
heading = sprintf(tr("gate_title", "%s: the %d units of %d with the longest memory, over " . \
                     "one example"), lstm_name, K, units) . \
          (strlen(task) > 0 ? sprintf(tr("gate_task", " (task %s)"), task) : "") . "\n" . \
          tr("gate_sub", "units sorted by their mean forget gate, highest at the top; " . \
             "x: the steps, labelled with their tokens; gates 0 = closed (white) … " . \
             "1 = open (dark)")

do for [fmt in formats] {
    if (fmt eq "png") {
        set terminal pngcairo size W, H font face.",12" enhanced
    } else {
        set terminal svg size W, H dynamic enhanced font face.",12" \
            name "gates" background rgb "white"
    }
    set output out.".".fmt
    set multiplot title heading font ",14" noenhanced
    set tics out nomirror
    # one tic per chosen unit, labelled with its number
    set ytics () font ",11"
    do for [r = 1:K] { set ytics add (sprintf(tr("gate_unit", "unit %d"), chosen[r]) r - 1) }
    set yrange [K - 0.5:-0.5]

    do for [r = 1:4] {
        g = word(kinds, r)
        if (g eq "cell") {
            # diverging: blue below zero, white at zero, red above
            set palette defined (-1 "#2166AC", -0.5 "#92C5DE", 0 "#F7F7F7", \
                                 0.5 "#F4A582", 1 "#B2182B")
            set cbrange [-cmax:cmax]
            set cbtics autofreq
            set cblabel tr("gate_cell_cb", "cell value")
        } else {
            set palette defined (0 "#FFFFFF", 0.3 "#DADAEB", 0.6 "#9E9AC8", 1 "#3F007D")
            set cbrange [0:1]
            set cbtics 0, 0.25, 1
            set cblabel tr("gate_cb", "gate value")
        }
        do for [c = 1:2] {
            p = word(parts, c)
            x0 = left + (c - 1) * (pw + gap)
            y0 = bottom + (4 - r) * (ph + vgap)
            set lmargin at screen 1.0 * x0 / W
            set rmargin at screen 1.0 * (x0 + pw) / W
            set bmargin at screen 1.0 * y0 / H
            set tmargin at screen 1.0 * (y0 + ph) / H
            set title part_name(p).": ".kind_name(g) font ",12"
            # a colour scale for each row, right of the decoder panel
            if (c == 2) {
                set colorbox user origin screen 1.0 * (x0 + pw + 20) / W, screen 1.0 * y0 / H \
                    size screen 18.0 / W, screen 1.0 * ph / H
            } else {
                unset colorbox
            }
            toks = tokens_of(p)
            n = steps_of(p)
            set xrange [-0.5:n - 0.5]
            # one tic per step, labelled with its token; smaller type for long examples
            tic_font = n <= 24 ? ",12" : n <= 40 ? ",9" : ",7"
            set xtics () noenhanced font tic_font
            do for [k = 1:n] { set xtics add (item(toks, "\t", k) k - 1) }
            if (r == 4) { set xlabel steps_name(p) } else { unset xlabel }
            eval sprintf("plot $%s_%s using 1:2:3 with image notitle", p, g)
        }
    }

    # ---- every unit's mean forget gate, sorted ------------------------------------------
    unset colorbox
    set lmargin at screen 1.0 * left / W
    set rmargin at screen 1.0 * (left + 2 * pw + gap) / W
    set bmargin at screen 80.0 / H
    set tmargin at screen (80.0 + oh) / H
    set title sprintf(tr("gate_means_title", "Mean forget gate of all %d units, sorted from " . \
                      "the highest (dark: the %d shown above)"), units, K) font ",12"
    set xrange [0.5:units + 0.5]
    set yrange [0:1.05]
    set xtics autofreq font ",11"
    set ytics 0, 0.25, 1 font ",11"
    set grid ytics lc rgb "#D4D4D4" dt 3
    set xlabel tr("gate_means_x", "units, by rank of their mean forget gate")
    set ylabel tr("gate_means_y", "mean f_t")
    set style fill solid 1.0 noborder
    set boxwidth 0.8
    plot $means using 1:($3 > 0 ? NaN : $2) with boxes lc rgb "#BCBDDC" notitle, \
         $means using 1:($3 > 0 ? $2 : NaN) with boxes lc rgb "#3F007D" notitle
    unset grid
    unset ylabel
    unset multiplot
    set output
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
}
print "gates.gp: wrote ".out." (".formats.")"
