/* figures.js (check) — every plots/*.gp drawn by gnuplot in WebAssembly, through
 * plots/web/figures.js, on the files of a comparison directory, against native gnuplot.
 *
 * Usage: node tests/web/figures.js GNUPLOT_JS DIR OUT
 *   GNUPLOT_JS  build/web/gnuplot.js
 *   DIR         a comparison directory (attnlab compare --out DIR): its tables,
 *               figure_vars.gp and traces
 *   OUT         a folder for the SVGs of both (OUT/wasm/, OUT/native/)
 *
 * Design. Each script runs natively as attnlab report runs it, in DIR with
 * -e "dir='.'; figs='OUT/native'; formats='svg'", and in WebAssembly through
 * renderFigure with formats "svg" on DIR's files. A line figure must be the same bytes.
 * A heat map cannot be: gnuplot's svg terminal embeds an image plot as a PNG, and the
 * WebAssembly build has no PNG writer (no libgd, no cairo), so it draws each cell as a
 * polygon instead. For those the check is the structure: one embedded image per panel
 * natively, one polygon per drawn cell in WebAssembly (the polygons of the colour boxes,
 * drawn both ways, aside), and every text element (titles, tokens, numbers) the same. Prints one line per
 * figure; exits 1 when one differs. */
"use strict";
const fs = require("fs");
const path = require("path");
const {execFileSync} = require("child_process");

const [gnuplotJs, dir, out] = process.argv.slice(2);
if (!gnuplotJs || !dir || !out) {
    console.error("usage: node tests/web/figures.js GNUPLOT_JS DIR OUT");
    process.exit(2);
}
const AttnGnuplot = require(path.resolve(gnuplotJs));
const {renderFigure} = require(path.resolve(__dirname, "../../plots/web/figures.js"));
const plots = path.resolve(__dirname, "../../plots");

/* Every file of folder d (relative paths), figures/ left out. */
function filesOf(d, rel = "", acc = {}) {
    for (const e of fs.readdirSync(path.join(d, rel), {withFileTypes: true})) {
        const p = rel ? rel + "/" + e.name : e.name;
        if (e.isDirectory()) {
            if (p !== "figures") filesOf(d, p, acc);
        } else if (e.isFile()) {
            acc[p] = fs.readFileSync(path.join(d, p));
        }
    }
    return acc;
}

/* The text elements of an SVG, tags inside them removed. */
const texts = (svg) => [...svg.matchAll(/<text[^>]*>([\s\S]*?)<\/text>/g)]
    .map((m) => m[1].replace(/<[^>]*>/g, ""));
const count = (svg, re) => (svg.match(re) || []).length;

/* The cells of the heat maps of a figure: one per matrix cell of each panel, from the
 * trace_vars.gp the script read (tr_X_nx × tr_X_ny), the masked ones (dec_self: the
 * upper triangle) left out; and the images native gnuplot embedded. */
function expectedCells(figure, files) {
    const vars = Object.keys(files).filter((p) => p.endsWith("/trace_vars.gp"))
        .map((p) => files[p].toString("utf8")).join("\n");
    const dims = (stem) => {
        const nx = +(vars.match(new RegExp("^" + stem + "_nx = (\\d+)$", "m")) || [])[1];
        const ny = +(vars.match(new RegExp("^" + stem + "_ny = (\\d+)$", "m")) || [])[1];
        return [nx, ny];
    };
    if (figure === "gates") { /* 4 rows of panels for each half, K units each */
        const K = Math.min(8, dims("tr_enc_gate_f")[0]);
        return [4 * K * (dims("tr_enc_gate_f")[1] + dims("tr_dec_gate_f")[1]), 8];
    }
    const kind = figure.replace(/^attention_/, "");
    if (kind === "rnn") { const [nx, ny] = dims("tr_alignment"); return [nx * ny, 1]; }
    let cells = 0, panels = 0;
    for (let l = 0; ; l++) {
        if (!dims(`tr_enc_self_l${l}_h0`)[0]) break;
        for (let h = 0; ; h++) {
            const [nx, ny] = dims(`tr_${kind}_l${l}_h${h}`);
            if (!nx) break;
            panels++;
            /* decoder self-attention: keys after the query are not drawn */
            cells += kind === "dec_self" ? ny * (ny + 1) / 2 : nx * ny;
        }
    }
    return [cells, panels];
}

(async () => {
    fs.mkdirSync(path.join(out, "wasm"), {recursive: true});
    fs.mkdirSync(path.join(out, "native"), {recursive: true});
    const files = filesOf(dir);
    let bad = 0;
    for (const gp of fs.readdirSync(plots).filter((f) => f.endsWith(".gp")).sort()) {
        const name = gp.slice(0, -3);
        const script = fs.readFileSync(path.join(plots, gp), "utf8");
        const t0 = process.hrtime.bigint();
        const r = await renderFigure(AttnGnuplot, {script, scriptName: name, files, formats: "svg"});
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.status !== 0) {
            console.log(`${name}.gp: gnuplot-wasm exited with ${r.status}: ${r.stderr.trim().split("\n").pop()}`);
            bad++;
            continue;
        }
        const nativeDir = path.resolve(out, "native");
        execFileSync("gnuplot", ["-e", `dir='.'; figs='${nativeDir}'; formats='svg'`,
                                 path.join(plots, gp)], {cwd: dir, stdio: ["ignore", "ignore", "pipe"]});
        const names = Object.keys(r.svgs).sort();
        if (names.length === 0) console.log(`${name}.gp: nothing drawn (${r.stdout.trim() || "no message"}) [${ms.toFixed(0)} ms]`);
        for (const fig of names) {
            fs.writeFileSync(path.join(out, "wasm", fig + ".svg"), r.svgs[fig]);
            const nat = path.join(nativeDir, fig + ".svg");
            if (!fs.existsSync(nat)) { console.log(`${fig}: native gnuplot drew none`); bad++; continue; }
            const a = r.svgs[fig], b = fs.readFileSync(nat, "utf8");
            if (a === b) { console.log(`${fig}: identical (${a.length} bytes) [${ms.toFixed(0)} ms]`); continue; }
            const images = count(b, /<image /g);
            if (images === 0) {
                let i = 0;
                while (a[i] === b[i]) i++;
                console.log(`${fig}: differs from native gnuplot at byte ${i}: ${JSON.stringify(a.slice(i, i + 60))} against ${JSON.stringify(b.slice(i, i + 60))}`);
                bad++;
                continue;
            }
            /* a heat map: the cells, and the text */
            const [cells, panels] = expectedCells(fig, files);
            /* the colour boxes are polygons both ways: the cells are the rest */
            const polys = count(a, /<polygon/g) - count(b, /<polygon/g);
            const sameText = JSON.stringify(texts(a)) === JSON.stringify(texts(b));
            const ok = images === panels && polys === cells && sameText;
            console.log(`${fig}: heat map, ${panels} panel(s): native embeds ${images} PNG(s), wasm draws ${polys} filled polygons for ${cells} cells; text ${sameText ? "the same" : "DIFFERENT"} [${ms.toFixed(0)} ms] ${ok ? "ok" : "WRONG"}`);
            bad += ok ? 0 : 1;
        }
    }
    process.exit(bad ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
