# gates.gp — inside the LSTM: its gates and cell state over the steps of one example.
#
# What it shows. A grid of heat maps, one column for the encoder (reading the source)
# and one for the decoder (writing the output); one row each for the input gate i_t,
# the forget gate f_t, the output gate o_t and the cell state c_t. In every panel the
# x axis is the step (labelled with the token read or written at that step) and the
# y axis the hidden unit. Gates run from 0 (closed, white) to 1 (open, dark purple);
# the cell state is signed, blue below 0 and red above, white at 0.
#
#   c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t      h_t = o_t ⊙ tanh(c_t)
#
# Reads. DIR/figure_vars.gp when present (task)
#        DIR/trace/lstm/enc.gate_i.tsv enc.gate_f.tsv enc.gate_o.tsv enc.cell.tsv
#                       (src × unit: one row per source step, one column per unit)
#        DIR/trace/lstm/dec.gate_i.tsv dec.gate_f.tsv dec.gate_o.tsv dec.cell.tsv
#                       (tgt × unit)
#        labelled matrices as in docs/results-format.md; the rows become the x axis here.
# Writes. DIR/figures/gates.png and DIR/figures/gates.svg (FIGS/ instead with
#         figs='FIGS'); nothing (with a message) when the LSTM was not traced.
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/gates.gp
# For the trace of a single run (e.g. `make demo`), name its folder with trace=:
#     gnuplot -e "dir='results/demo/runs/lstm-s1'; trace='results/demo/runs/lstm-s1/trace'" plots/gates.gp
#
# What to look for. The LSTM has no attention: the gates are its only way of choosing
# what to keep. A unit whose forget gate stays near 1 (dark) keeps its cell value from
# step to step, a memory; a forget gate near 0 wipes it. Input gates open on the steps
# whose token a unit stores. In the cell-state row, look for units that hold a steady
# colour across the encoder and change colour only in the decoder: they carry a piece of
# the source to the output. With 128 units and a long source, few units can hold one
# token each, which is why the LSTM forgets as sequences grow.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/gates.gp"
    exit status 2
}
set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# Paths go to a shell only inside single quotes, each ' written '\'' (shq), so a folder
# name cannot become a command.
shq_body(s) = strstrt(s, "'") == 0 ? s : \
    s[1:strstrt(s, "'") - 1]."'\\''".shq_body(s[strstrt(s, "'") + 1:])
shq(s) = "'".shq_body(s)."'"
file_exists(f) = int(system("test -f ".shq(f)." && echo 1 || echo 0"))
if (file_exists(dir."/figure_vars.gp")) { load dir."/figure_vars.gp" }
if (!exists("task")) { task = "" }
# Where the matrices are: the lstm folder of a comparison, or the one given.
tdir = exists("trace") ? trace : dir."/trace/lstm"
# The figures go to DIR/figures, or to the folder figs names (attnlab report passes a
# temporary one and moves each figure into DIR/figures once it is complete).
if (!exists("figs")) { figs = dir."/figures" }
out  = figs."/gates"
system("mkdir -p ".shq(figs))
parts = "enc dec"
kinds = "gate_i gate_f gate_o cell"

missing = ""
do for [p in parts] {
    do for [g in kinds] {
        f = tdir."/".p.".".g.".tsv"
        if (!file_exists(f)) { missing = missing." ".p.".".g.".tsv" }
    }
}
if (strlen(missing) > 0) {
    print "gates.gp: no".missing." in ".tdir." (lstm not traced): skipping gates"
    exit
}

# ---- read the eight matrices --------------------------------------------------------
# The files have one row per step; the figure wants steps along x, so each matrix is
# transposed once into a datablock ($enc_gate_i, ...) of (step, unit, value) triples.
do for [p in parts] {
    do for [g in kinds] {
        f = tdir."/".p.".".g.".tsv"
        eval sprintf("set table $%s_%s", p, g)
        plot f matrix rowheaders columnheaders using 2:1:3 with table
        unset table
    }
}
# The tokens of each step (the row labels) and the number of units (columns).
enc_tokens = ""
dec_tokens = ""
stats tdir."/enc.gate_i.tsv" every ::1 using (enc_tokens = enc_tokens.strcol(1)." ", 0) nooutput
stats tdir."/dec.gate_i.tsv" every ::1 using (dec_tokens = dec_tokens.strcol(1)." ", 0) nooutput
stats tdir."/enc.gate_i.tsv" matrix rowheaders columnheaders nooutput
units = int(STATS_size_x)
# One colour scale for the cell state of both halves, symmetric about 0.
stats tdir."/enc.cell.tsv" matrix rowheaders columnheaders nooutput
cmax = abs(STATS_min) > abs(STATS_max) ? abs(STATS_min) : abs(STATS_max)
stats tdir."/dec.cell.tsv" matrix rowheaders columnheaders nooutput
cmax = abs(STATS_min) > cmax ? abs(STATS_min) : cmax
cmax = abs(STATS_max) > cmax ? abs(STATS_max) : cmax
cmax = cmax > 0 ? cmax : 1

kind_name(g) = g eq "gate_i" ? "input gate i_t (1 = write the new input)" : \
               g eq "gate_f" ? "forget gate f_t (1 = keep the memory)" : \
               g eq "gate_o" ? "output gate o_t (1 = show the memory)" : \
               "cell state c_t (the memory itself)"
part_name(p) = p eq "enc" ? "Encoder" : "Decoder"
tokens_of(p) = p eq "enc" ? enc_tokens : dec_tokens
steps_name(p) = p eq "enc" ? "source step (token read)" : "output step (token written)"

# Layout in pixels: 4 rows × 2 columns of panels, colour scales on the right.
pw = 460; ph = 190; gap = 110; vgap = 85; left = 100; right = 150; top = 120; bottom = 70
W = left + 2 * pw + gap + right
H = top + 4 * ph + 3 * vgap + bottom

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size W, H font "sans,12" enhanced
    } else {
        set terminal svg size W, H dynamic enhanced font "sans,12" \
            name "gates" background rgb "white"
    }
    set output out.".".fmt
    set multiplot title "LSTM gates and cell state over one example" . \
        (strlen(task) > 0 ? " (task ".task.")" : "") . "\n" . \
        "{/*0.85 x: the steps, labelled with their tokens; y: hidden units; " . \
        "gates 0 = closed (white) … 1 = open (dark)}" \
        font ",14"
    set tics out nomirror
    set ytics autofreq
    if (units <= 16) { set ytics 1 }

    do for [r = 1:4] {
        g = word(kinds, r)
        if (g eq "cell") {
            # diverging: blue below zero, white at zero, red above
            set palette defined (-1 "#2166AC", -0.5 "#92C5DE", 0 "#F7F7F7", \
                                 0.5 "#F4A582", 1 "#B2182B")
            set cbrange [-cmax:cmax]
            set cbtics autofreq
            set cblabel "cell value"
        } else {
            set palette defined (0 "#FFFFFF", 0.3 "#DADAEB", 0.6 "#9E9AC8", 1 "#3F007D")
            set cbrange [0:1]
            set cbtics 0, 0.25, 1
            set cblabel "gate value"
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
            n = words(toks)
            set xrange [-0.5:n - 0.5]
            set yrange [-0.5:units - 0.5]
            # one tic per step, labelled with its token; smaller type for long examples
            tic_font = n <= 24 ? ",12" : n <= 40 ? ",9" : ",7"
            set xtics () font tic_font
            do for [k = 1:n] { set xtics add (word(toks, k) k - 1) }
            if (r == 4) { set xlabel steps_name(p) } else { unset xlabel }
            if (c == 1) { set ylabel "hidden unit" } else { unset ylabel }
            eval sprintf("plot $%s_%s using 1:2:3 with image notitle", p, g)
        }
    }
    unset multiplot
    set output
}
print "gates.gp: wrote ".out.".png and ".out.".svg"
