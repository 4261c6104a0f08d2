#!/bin/sh
# labkeys.sh — runs the lab handouts at full length over several seeds and BLAS kernels
# and writes, for every run a handout trains, the band (smallest and largest value) of
# every number the keys quote: accuracies by length and position, the teacher-forced
# accuracy of the training log by step, the parameters. The keys in docs/labs/keys and
# docs/zh/labs/keys are written from these bands; run this after any change that alters
# the numerics or the training recipe, and rewrite the keys' numbers from what it prints.
#
# What it does. For every kernel K and seed offset S (0 .. SEEDS-1) it makes a directory
# OUT/K/sS+1 holding build/attnlab, a wrapper of the built program that adds S to the
# seed of every `train` (a handout run without --seed gets seed 1 + S; lab 01's runs of
# seeds 2 and 3 get 2 + S and 3 + S), and links to docs/ and plots/. There it runs, line
# by line, every ```sh block of each handout docs/labs/NN-*.md with OPENBLAS_CORETYPE=K,
# writing each command and its output to lab-NN.log. Blocks that build an edited copy of
# the sources (lab 03's unmasked decoder, lab 06's planted mistakes) are left out: their
# edits are made by hand. A lab whose log ends with its completion line is not run again,
# so an interrupted invocation resumes. Then, from every results/labs/NN/RUN directory of
# every instance, OUT/bands-NN.tsv holds one line per quantity:
#     run  file  key  what  n  min  max
# where file is eval.tsv (key: length; what: token_acc or seq_acc), eval_positions.tsv
# (key: length/position), train_log.tsv (key: step; what: token_acc, teacher-forced) or
# build.tsv (what: parameters, train_seconds), and n the number of instances found.
#
# Cost: the eight labs take about ten minutes per instance on a quiet core, lab 01's six
# LSTM runs most of it; instances run JOBS at a time, so the default six take about half
# an hour on two cores.
#
# usage: tests/labkeys.sh [-o OUT] [-s SEEDS] [-k "KERNEL ..."] [-j JOBS] [LAB ...]
#        (defaults: results/keys, 3, "Haswell SkylakeX", 2, every lab)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
out=results/keys
seeds=3
kernels="Haswell SkylakeX"
jobs=2
usage="usage: tests/labkeys.sh [-o OUT] [-s SEEDS] [-k \"KERNEL ...\"] [-j JOBS] [LAB ...]"
while getopts o:s:k:j: opt; do
    case $opt in
    o) out=$OPTARG ;;
    s) seeds=$OPTARG ;;
    k) kernels=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) echo "$usage" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
case $seeds$jobs in *[!0-9]*|'') echo "labkeys.sh: -s and -j take whole numbers; $usage" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then
    set -- $(ls docs/labs/[0-9][0-9]-*.md | sed 's|.*/\([0-9][0-9]\)-.*|\1|')
fi
for lab in "$@"; do
    ls docs/labs/"$lab"-*.md >/dev/null 2>&1 ||
        { echo "labkeys.sh: no handout docs/labs/$lab-*.md (labs are two digits: 01, 02, ...)" >&2; exit 2; }
done
make --no-print-directory -j2 build/attnlab build/data/translate.tsv >/dev/null
mkdir -p "$out"
case $out in /*) ;; *) out=$top/$out ;; esac

# The lines of the ```sh blocks of handout $1 that run on the built program: blocks that
# name an edited copy of the sources are left out, and so is `make translate-data` (made
# above, and linked into every instance as build/data).
lab_lines() {
    awk '/^```sh/ { inblock = 1; n = 0; skip = 0; next }
         /^```/ && inblock { inblock = 0; if (!skip) for (i = 1; i <= n; i++) print line[i]; next }
         inblock && /^make translate-data/ { next }
         inblock { line[++n] = $0; if ($0 ~ /nomask|labs\/06\/src/) skip = 1 }' "$1"
}

# Runs every lab of the invocation in one instance: kernel $1, seed offset $2.
run_instance() {
    kernel=$1
    off=$2
    shift 2
    dir=$out/$kernel/s$((off + 1))
    mkdir -p "$dir/build"
    ln -sfn "$top/docs" "$dir/docs"
    ln -sfn "$top/plots" "$dir/plots"
    ln -sfn "$top/build/data" "$dir/build/data"
    cat >"$dir/build/attnlab" <<EOF
#!/bin/sh
# the built program, with $off added to the seed of every train (seed 1 when none is given)
real='$top/build/attnlab'
off=$off
[ "\${1:-}" = train ] || exec "\$real" "\$@"
n=\$#
seen=0
prev=
for a in "\$@"; do
    b=\$a
    [ "\$prev" = --seed ] && { b=\$((a + off)); seen=1; }
    case \$a in --seed=*) b="--seed=\$((\${a#--seed=} + off))"; seen=1 ;; esac
    set -- "\$@" "\$b"
    prev=\$a
done
shift \$n
[ \$seen = 1 ] || set -- "\$@" --seed \$((1 + off))
exec "\$real" "\$@"
EOF
    chmod +x "$dir/build/attnlab"
    for lab in "$@"; do
        log=$dir/lab-$lab.log
        if [ -f "$log" ] && tail -n 1 "$log" | grep -q '^# lab .* done$'; then
            continue
        fi
        handout=$(ls docs/labs/"$lab"-*.md)
        rm -rf "$dir/results/labs/$lab"
        {
            echo "# lab $lab, kernel $kernel, seed offset $off"
            (cd "$dir" && OPENBLAS_CORETYPE=$kernel build/attnlab --version | grep kernel)
        } >"$log"
        lab_lines "$handout" | while IFS= read -r line; do
            echo "\$ $line" >>"$log"
            (cd "$dir" && OPENBLAS_CORETYPE=$kernel sh -c "$line") >>"$log" 2>&1 </dev/null ||
                echo "# exit status $?" >>"$log"
        done
        echo "# lab $lab done" >>"$log"
        echo "labkeys.sh: lab $lab, kernel $kernel, seed offset $off: done" >&2
    done
}

running=0
for kernel in $kernels; do
    off=0
    while [ "$off" -lt "$seeds" ]; do
        run_instance "$kernel" "$off" "$@" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait
            running=0
        fi
        off=$((off + 1))
    done
done
wait

# The bands: every number of every run's tables, smallest and largest over the instances.
for lab in "$@"; do
    for f in "$out"/*/s*/results/labs/"$lab"/*/eval.tsv; do
        [ -f "$f" ] || continue
        d=$(dirname "$f")
        run=$(basename "$d")
        awk -F'\t' -v run="$run" 'NR > 1 { print run "\teval.tsv\t" $2 "\ttoken_acc\t" $4;
                                           print run "\teval.tsv\t" $2 "\tseq_acc\t" $5 }' "$f"
        awk -F'\t' -v run="$run" 'NR > 1 { print run "\teval_positions.tsv\t" $2 "/" $3 "\taccuracy\t" $4 }' \
            "$d/eval_positions.tsv"
        awk -F'\t' -v run="$run" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                                  { print run "\ttrain_log.tsv\t" $1 "\ttoken_acc\t" $(col["token_acc"]) }' \
            "$d/train_log.tsv"
        awk -F'\t' -v run="$run" '$1 == "parameters" || $1 == "train_seconds" {
                                      print run "\tbuild.tsv\t-\t" $1 "\t" $2 }' "$d/build.tsv"
    done | awk -F'\t' '{ k = $1 "\t" $2 "\t" $3 "\t" $4
                         if (!(k in n)) { order[++m] = k; lo[k] = $5; hi[k] = $5 }
                         n[k]++
                         if ($5 + 0 < lo[k] + 0) lo[k] = $5
                         if ($5 + 0 > hi[k] + 0) hi[k] = $5 }
                       END { print "run\tfile\tkey\twhat\tn\tmin\tmax"
                             for (i = 1; i <= m; i++) print order[i] "\t" n[order[i]] "\t" lo[order[i]] "\t" hi[order[i]] }' \
        >"$out/bands-$lab.tsv"
    echo "labkeys.sh: $out/bands-$lab.tsv" >&2
done

# The keys' own bands: every line of docs/labs/keys/NN-*.bands.tsv recomputed from the
# instances' files, rounded to the decimals the line has, into OUT/keys/ (same name; the
# comment lines and the header are kept). Each band that moved is printed as
#     NN-NAME.bands.tsv:LINE  FILE  ROW  COLUMN  OLD -> NEW
# so that the keys (English and Chinese) can be rewritten where they quote it, followed by
# every line of the two keys that quotes the old band ("    quoted at FILE:LINE: ..."),
# the marking lines of the rubric included; a line whose number some instance did not
# write is printed with "missing in N of M".
mkdir -p "$out/keys"
for lab in "$@"; do
    for bands in docs/labs/keys/"$lab"-*.bands.tsv; do
        [ -f "$bands" ] || continue
        name=$(basename "$bands")
        awk -F'\t' -v out="$out" -v name="$name" '
            # The number that row and column pick in the table at path ("" when none):
            # row is NAME=VALUE[,NAME=VALUE...] or, for a matrix, #ROW,COLUMN from 1.
            function value(path, row, column,    line, h, nh, f, nf, k, j, r, col, rc,
                                                 matrix, sel, ns, eq, hit, ok, v) {
                v = ""
                if ((getline line < path) <= 0) { close(path); return "" }
                nh = split(line, h, "\t")
                matrix = substr(row, 1, 1) == "#"
                col = 0
                if (matrix) { split(substr(row, 2), rc, ","); col = rc[2] + 1 }
                else for (k = 1; k <= nh; k++) if (h[k] == column) col = k
                r = 0
                while (v == "" && (getline line < path) > 0 && line != "") {
                    nf = split(line, f, "\t")
                    r++
                    if (matrix) ok = r == rc[1] + 0
                    else {
                        ok = 1
                        ns = split(row, sel, ",")
                        for (j = 1; j <= ns && ok; j++) {
                            eq = index(sel[j], "=")
                            hit = 0
                            for (k = 1; k <= nh && k <= nf; k++)
                                if (h[k] == substr(sel[j], 1, eq - 1) && f[k] == substr(sel[j], eq + 1)) hit = 1
                            ok = hit
                        }
                    }
                    if (ok && col >= 1 && col <= nf && f[col] ~ /^-?[0-9]/) v = f[col]
                }
                close(path)
                return v
            }
            function decimals(s) { return index(s, ".") ? length(s) - index(s, ".") : 0 }
            BEGIN {
                cmd = "ls -d \"" out "\"/*/s*"
                while ((cmd | getline d) > 0) inst[++ninst] = d
                close(cmd)
                dest = out "/keys/" name
                printf "" > dest
            }
            /^#/ || !header { if ($0 !~ /^#/) header = 1; print > dest; next }
            {
                dec = decimals($4) > decimals($5) ? decimals($4) : decimals($5)
                # a band written with an exponent comes from a %g column of the program
                # tables (six significant digits): it is written again the same way
                sci = ($4 $5) ~ /[eE]/
                scale = 1
                for (k = 0; k < dec; k++) scale *= 10
                lo = ""; hi = ""; miss = 0
                for (i = 1; i <= ninst; i++) {
                    v = value(inst[i] "/" $1, $2, $3)
                    if (v == "") { miss++; continue }
                    if (!sci) v = int(v * scale + 0.5) / scale
                    if (lo == "" || v < lo) lo = v
                    if (hi == "" || v > hi) hi = v
                }
                if (lo == "") { print > dest; new = "missing in every instance" }
                else {
                    fmt = sci ? "%.6g" : "%." dec "f"
                    nlo = sprintf(fmt, lo); nhi = sprintf(fmt, hi)
                    print $1 "\t" $2 "\t" $3 "\t" nlo "\t" nhi > dest
                    new = nlo " " nhi (miss ? " (missing in " miss " of " ninst ")" : "")
                }
                if (new != $4 " " $5)
                    print name ":" NR "\t" $1 "\t" $2 "\t" $3 "\t" $4 " " $5 " -> " new
            }' "$bands" | while IFS= read -r moved; do
            # where the keys quote the band that moved, marking lines ("accept if ...",
            # "给分条件") included: each of these lines is to be rewritten
            echo "$moved"
            old=$(printf '%s\n' "$moved" | awk -F'\t' '{ split($5, v, " "); print v[1] }')
            old_max=$(printf '%s\n' "$moved" | awk -F'\t' '{ split($5, v, " "); print v[2] }')
            [ "$old" = "$old_max" ] || old="$old–$old_max"
            grep -n -F -- "$old" docs/labs/keys/"$lab"-*.md docs/zh/labs/keys/"$lab"-*.md |
                sed "s/^/    quoted at /"
        done
    done
done
echo "labkeys.sh: the keys' bands recomputed in $out/keys" >&2
