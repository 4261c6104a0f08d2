# attention.gp — what the attention models look at, as heat maps over one example.
#
# What it shows. Four figures, each a heat map (or a grid of them) of attention weights
# for one decoded example; every row is a softmax, so it sums to 1, and the colour runs
# from the palest blue (0) to dark blue (1); cells that do not exist (masked) stay white.
# Tokens label both axes: rows are queries (who looks), columns keys (what is looked at).
#   attention_rnn       the additive (Bahdanau) alignment of rnn_attention: row t is α_t,
#                       the weights over the encoder states when emitting output t.
#   attention_enc_self  Transformer encoder self-attention: each source token (row, the
#                       query) over all source tokens (columns, the keys).
#   attention_dec_self  Transformer decoder self-attention: each output step over the
#                       output steps; the causal mask hides later steps, so the upper
#                       triangle is empty.
#   attention_cross     Transformer encoder-decoder attention: each output step over the
#                       source tokens.
# The Transformer figures are grids: one row per layer, one column per head.
#
# Reads. DIR/figure_vars.gp (models; traced, the groups whose trace/GROUP/ holds a
#        trace_vars.gp), not read when trace= is given
#        DIR/trace/GROUP/trace_vars.gp, which attnlab writes beside the matrices below:
#        their tokens as strings and their weights as datablocks (the matrices
#        themselves are not read: without a shell gnuplot cannot cut their labels off)
#        DIR/trace/rnn_attention/alignment.tsv                 (tgt × src)
#        DIR/trace/transformer/enc_self.l{K}.h{J}.tsv          (src × src)
#        DIR/trace/transformer/dec_self.l{K}.h{J}.tsv          (tgt × tgt)
#        DIR/trace/transformer/cross.l{K}.h{J}.tsv             (tgt × src)
#        (a variant's folder instead, e.g. trace/rnn_attention:cell=lstm/, when models
#        names the model only with its settings; the title then shows them as flags)
#        each a labelled matrix: a header row "rows\cols" then the column tokens, then
#        one row per row token (docs/results-format.md). Layer K and head J count from 0.
#        The tokens are plain text and drawn as written (below, "The matrices"): a
#        token of your own data may be any word, '#', '"' and '{' included. The layers
#        and heads are counted from the matrices of encoder self-attention.
# Writes. DIR/figures/attention_rnn, attention_enc_self, attention_dec_self,
#         attention_cross, each as .png and .svg, or in the formats formats= names
#         (into FIGS/ instead when figs='FIGS' is given). A figure whose files are missing (the model was not traced) is
#         skipped with a message.
#
# Run, from the top of the source tree:
#     gnuplot -e "dir='results/demo'" plots/attention.gp
# For the trace of a single run (attnlab attention --out T writes T/NAME.tsv,
# T/trace_vars.gp and the folder T/figures/), name the folder with trace=; the figures go
# to DIR/figures/, which must exist:
#     gnuplot -e "dir='runs/attn/trace'; trace='runs/attn/trace'" plots/attention.gp
#
# What to look for. In copy, output t must reproduce input t, so a model that solved the
# task by attention shows a dark diagonal in attention_rnn and in at least one cross-
# attention head: "output t looks at input t". In reverse, the diagonal runs the other
# way. Heads differ: some look at the token itself, some at the one before, some spread
# out evenly (they gather context, or are unused). In decoder self-attention nothing is
# ever above the diagonal: a position cannot see the outputs that come after it.

if (!exists("dir")) {
    print "usage: gnuplot -e \"dir='results/demo'\" plots/attention.gp"
    exit status 2
}
set encoding utf8
set print "-"    # messages to standard output; standard error is for problems
set datafile separator "\t"

# A comparison directory's facts (models, and which of them were traced); the trace of a
# single run (trace=FOLDER) comes without them.
if (!exists("trace")) { load dir."/figure_vars.gp" }
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
# A group of runs is named after its model, plus the settings that tell its setups apart
# ("rnn_attention:cell=lstm"); people read it as the command line said it
# ("rnn_attention --cell lstm").
base_of(m) = strstrt(m, ":") > 0 ? m[1:strstrt(m, ":") - 1] : m
dashes(k) = strstrt(k, "_") == 0 ? k : k[1:strstrt(k, "_") - 1]."-".dashes(k[strstrt(k, "_") + 1:])
flag(kv) = strstrt(kv, "=") == 0 ? "--".dashes(kv) : \
    "--".dashes(kv[1:strstrt(kv, "=") - 1])." ".kv[strstrt(kv, "=") + 1:]
flags(s) = strstrt(s, ",") == 0 ? flag(s) : \
    flag(s[1:strstrt(s, ",") - 1])." ".flags(s[strstrt(s, ",") + 1:])
pretty(m) = strstrt(m, ":") == 0 ? m : base_of(m)." ".flags(m[strstrt(m, ":") + 1:])
# the same for an enhanced-text title, where _ would start a subscript
enh(s) = strstrt(s, "_") == 0 ? s : s[1:strstrt(s, "_") - 1]."\\_".enh(s[strstrt(s, "_") + 1:])
# The group each figure shows: the first of `models` whose model it is (the folder of its
# trace is named after the group), else the model's own name.
rnn_group = "rnn_attention"
tfm_group = "transformer"
if (exists("models")) {
    do for [i = words(models):1:-1] {
        if (base_of(word(models, i)) eq "rnn_attention") { rnn_group = word(models, i) }
        if (base_of(word(models, i)) eq "transformer") { tfm_group = word(models, i) }
    }
}
# Where the matrices are: one folder per group in a comparison, or the one given.
rnn_dir = exists("trace") ? trace : dir."/trace/".rnn_group
tdir    = exists("trace") ? trace : dir."/trace/".tfm_group
# ---- The matrices, as attnlab wrote them for gnuplot -------------------------------------
# A matrix file holds the tokens in its first row and first column, the weights
# elsewhere. gnuplot's data reader would take a token starting with '#' for a comment and
# a '"' for the start of a quoted string, and its enhanced text would take x_1 for a
# subscript. So attnlab writes, beside the files, trace_vars.gp: for each NAME.tsv, under
# the stem tr_NAME (every character but letters and digits as _), the weights alone as a
# datablock $tr_NAME, and the tokens as strings (tr_NAME_cols, tr_NAME_rows, separated by
# tabs; tr_NAME_corner) that are never parsed; they are drawn as tic labels with
# enhanced text off. figure_vars.gp's traced names the groups whose folder has one.
is_traced(g) = strstrt(" ".traced." ", " ".g." ") > 0
if (exists("trace")) {
    load trace."/trace_vars.gp"
} else {
    if (!exists("traced")) { traced = "" }
    if (is_traced(rnn_group)) { load rnn_dir."/trace_vars.gp" }
    if (is_traced(tfm_group)) { load tdir."/trace_vars.gp" }
}
has(s) = exists(s."_corner")
numbers(s) = "$".s
col_labels(s) = value(s."_cols")   # separated by tabs
row_labels(s) = value(s."_rows")   # separated by tabs
# item k (from 1) of the list s whose items are separated by sep
item(s, sep, k) = k <= 1 ? (strstrt(s, sep) == 0 ? s : s[1:strstrt(s, sep) - 1]) : \
    item(s[strstrt(s, sep) + 1:], sep, k - 1)
# The corner cell of a matrix file names its axes, "rows\cols" (e.g. "tgt\src").
corner(s) = value(s."_corner")
rows_of(c) = strstrt(c, "\\") > 0 ? c[1:strstrt(c, "\\") - 1] : c
cols_of(c) = strstrt(c, "\\") > 0 ? c[strstrt(c, "\\") + 1:] : c
noun(a) = a eq "src" ? tr("noun_src", "source token") : \
          a eq "tgt" ? tr("noun_tgt", "output token") : \
          a eq "tgt_in" ? tr("noun_tgt_in", "decoder input") : a
# Rows are the queries (who looks), columns the keys (what is looked at).
xname(c) = sprintf(tr("att_x", "%s looked at (key), in order left to right"), noun(cols_of(c)))
yname(c) = sprintf(tr("att_y", "%s looking (query), top to bottom"), noun(rows_of(c)))
# shorter, for the panels of a grid
xshort(c) = sprintf(tr("att_x_short", "key: %ss"), noun(cols_of(c)))
yshort(c) = sprintf(tr("att_y_short", "query: %ss"), noun(rows_of(c)))

# Attention weights: the palest blue for 0 (nothing looked at), dark blue for the largest
# weight of the panel. Not pure white, so that cells the causal mask removed (not drawn
# at all) stand out as white. Each panel is plotted as weight / (its largest weight), so
# one colour bar from 0 to 1 serves every panel; the title says what 1 is.
set palette defined (0 "#F0F5FB", 0.15 "#DEEBF7", 0.4 "#9ECAE1", 0.7 "#3182BD", 1 "#08306B")
set cbrange [0:1]
set cbtics ("0" 0, tr("att_q1", "¼") 0.25, tr("att_q2", "½") 0.5, tr("att_q3", "¾") 0.75, \
            tr("att_max", "max") 1)
set cblabel tr("att_cb", "weight ÷ the largest weight of the panel")
set tics out nomirror
set yrange [*:*] reverse       # the first row (first query) at the top, as in the file
unset key

# ---- the additive attention of rnn_attention -------------------------------------------
f = rnn_dir."/alignment.tsv"
m = "tr_alignment"
if (!has(m)) {
    print "attention.gp: no ".f." (rnn_attention not traced): skipping attention_rnn"
} else {
    stats numbers(m) matrix nooutput
    nx = int(STATS_size_x); ny = int(STATS_size_y)
    n = nx > ny ? nx : ny
    pmax = STATS_max > 0 ? STATS_max : 1
    c = corner(m)
    # one tic per token: keys along x, queries along y
    xl = col_labels(m); yl = row_labels(m)
    set xtics () noenhanced
    set ytics () noenhanced
    do for [k = 1:nx] { set xtics add (item(xl, "\t", k) k - 1) }
    do for [k = 1:ny] { set ytics add (item(yl, "\t", k) k - 1) }
    # Numbers in the cells when they fit; white on dark cells, black on light ones.
    show_values = n <= 12
    # smaller token labels for long examples, so neighbours do not overlap
    tic_font = n <= 24 ? ",12" : n <= 40 ? ",9" : ",7"
    set tics font tic_font
    ink(v) = v / pmax > 0.55 ? 0xFFFFFF : 0x222222
    do for [fmt in formats] {
        if (fmt eq "png") {
            set terminal pngcairo size 960, 900 font face.",12" enhanced
        } else {
            set terminal svg size 960, 900 dynamic enhanced font face.",12" \
                name "attention_rnn" background rgb "white"
        }
        set output figs."/attention_rnn.".fmt
        set lmargin at screen 0.12; set rmargin at screen 0.80
        set bmargin at screen 0.10; set tmargin at screen 0.84
        set colorbox user origin screen 0.84, screen 0.10 size screen 0.03, screen 0.74
        # (a title made by a function call is set through a variable: `set title f(x)`
        # loses the escapes of enhanced text)
        heading = enh(pretty(rnn_group)).tr("att_rnn_title", ": additive (Bahdanau) attention α") . \
            "\n{/*0.85 " . tr("att_rnn_rows", "rows are output steps t, columns source " . \
            "positions j; row t = α_t, the weights when emitting output t") . "}\n" . \
            "{/*0.85 " . sprintf(tr("att_rnn_colour", "a diagonal means output t looks at " . \
            "input t; colour: 0 … %.2f, the largest weight"), pmax) . "}"
        set title heading font ",14"
        set xlabel xname(c)
        set ylabel yname(c)
        if (show_values) {
            plot numbers(m) matrix using 1:2:($3 / pmax) with image, \
                 numbers(m) matrix \
                     using 1:2:($3 < 0.005 ? "" : sprintf("%.2f", $3)):(ink($3)) \
                     with labels tc rgb variable font ",10"
        } else {
            plot numbers(m) matrix using 1:2:($3 / pmax) with image
        }
        set output
    }
    set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
    set tics font ",12"
    print "attention.gp: wrote ".figs."/attention_rnn (".formats.")"
}

# ---- the Transformer: one grid of heads per kind of attention --------------------------
# layers and heads: as many as the trace has matrices of encoder self-attention
R = 0
while (has(sprintf("tr_enc_self_l%d_h0", R))) { R = R + 1 }
C = 0
while (has(sprintf("tr_enc_self_l0_h%d", C))) { C = C + 1 }

do for [kind in "enc_self dec_self cross"] {
    first = tdir."/".kind.".l0.h0.tsv"
    m = "tr_".kind."_l0_h0"
    if (R < 1 || C < 1 || !has(m)) {
        print "attention.gp: no ".first." (transformer not traced): skipping attention_".kind
    } else {
        sub = "{/*0.85 " . tr("att_tfm_sub", "rows: queries (who looks), columns: keys " . \
              "(what is looked at); a panel per layer and head, each on its own colour scale") . "}"
        # the variant, when the comparison names one ("transformer --pos learned")
        sub = tfm_group eq "transformer" ? sub : \
              sub."\n{/*0.85 ".tr("att_runs_of", "runs of ").enh(pretty(tfm_group))."}"
        who = "Transformer"
        heading = kind eq "enc_self" ? \
              who.tr("att_enc_title", " encoder self-attention: source tokens over source " . \
              "tokens")."\n".sub : \
            kind eq "dec_self" ? \
              who.tr("att_dec_title", " decoder self-attention: output steps over output " . \
              "steps")."\n".sub."\n{/*0.85 ".tr("att_dec_mask", "upper triangle empty " . \
              "(white): the causal mask hides the steps that come later")."}" : \
              who.tr("att_cross_title", " cross-attention: output steps over source " . \
              "tokens")."\n".sub."\n{/*0.85 ".tr("att_cross_diag", "a diagonal means output " . \
              "t looks at input t")."}"
        stats numbers(m) matrix nooutput
        nx = int(STATS_size_x); ny = int(STATS_size_y)
        n = nx > ny ? nx : ny
        c = corner(m)
        # the tokens of the example, the same in every panel of this kind
        xl = col_labels(m); yl = row_labels(m)
        set xtics () noenhanced
        set ytics () noenhanced
        do for [k = 1:nx] { set xtics add (item(xl, "\t", k) k - 1) }
        do for [k = 1:ny] { set ytics add (item(yl, "\t", k) k - 1) }
        # Panel size in pixels grows with the number of tokens so the labels stay legible.
        cell = n <= 12 ? 280 : n <= 24 ? 380 : 520
        tic_font = n <= 12 ? ",11" : n <= 24 ? ",9" : ",7"
        gap = 70; vgap = 100; left = 120; right = 150; bottom = 80
        top = 140 + (tfm_group eq "transformer" ? 0 : 22) + (kind eq "enc_self" ? 0 : 22)
        W = left + C * cell + (C - 1) * gap + right
        if (W < 1000) {
            # room for the title: widen both sides, the grid stays centred
            left = left + (1000 - W) / 2
            right = right + (1000 - W) / 2
            W = left + C * cell + (C - 1) * gap + right
        }
        H = top + R * cell + (R - 1) * vgap + bottom
        do for [fmt in formats] {
            if (fmt eq "png") {
                set terminal pngcairo size W, H font face.",12" enhanced
            } else {
                set terminal svg size W, H dynamic enhanced font face.",12" \
                    name "attention_".kind background rgb "white"
            }
            set output figs."/attention_".kind.".".fmt
            set multiplot title heading font ",14"
            set tics font tic_font
            do for [k = 0:R - 1] {
                do for [j = 0:C - 1] {
                    f = sprintf("%s/%s.l%d.h%d.tsv", tdir, kind, k, j)
                    m = sprintf("tr_%s_l%d_h%d", kind, k, j)
                    x0 = left + j * (cell + gap)
                    y0 = bottom + (R - 1 - k) * (cell + vgap)
                    set lmargin at screen 1.0 * x0 / W
                    set rmargin at screen 1.0 * (x0 + cell) / W
                    set bmargin at screen 1.0 * y0 / H
                    set tmargin at screen 1.0 * (y0 + cell) / H
                    # this panel's own scale: its largest weight is the darkest blue
                    pmax = 1
                    if (has(m)) {
                        stats numbers(m) matrix nooutput
                        pmax = STATS_max > 0 ? STATS_max : 1
                    }
                    set title sprintf(tr("att_panel", "layer %d, head %d  (max %.2f)"), k, j, \
                        pmax) font ",12"
                    if (j == 0) { set ylabel yshort(c) } else { unset ylabel }
                    if (k == R - 1) { set xlabel xshort(c) } else { unset xlabel }
                    # one colour scale for the whole grid, right of the last column
                    if (j == C - 1 && k == 0) {
                        set colorbox user origin screen 1.0 * (W - right + 25) / W, \
                            screen 1.0 * bottom / H size screen 22.0 / W, \
                            screen 1.0 * (H - top - bottom) / H
                    } else {
                        unset colorbox
                    }
                    if (!has(m)) {
                        print "attention.gp: missing ".f.": that panel is left empty"
                        set label 9 tr("att_missing", "missing") at graph 0.5, graph 0.5 center
                        plot [0:1] [0:1] NaN
                        unset label 9
                    } else {
                        if (kind eq "dec_self") {
                            # keys after the query ($1 > $2) are masked: draw nothing there
                            plot numbers(m) matrix \
                                using 1:2:($1 > $2 ? NaN : $3 / pmax) with image
                        } else {
                            plot numbers(m) matrix using 1:2:($3 / pmax) with image
                        }
                    }
                }
            }
            unset multiplot
            set output
            set tics font ",12"
        }
        set lmargin -1; set rmargin -1; set bmargin -1; set tmargin -1
        print "attention.gp: wrote ".figs."/attention_".kind." (".formats.")"
    }
}
